"""decide.py NAME SECS T...: is there a schedule with makespan <= T (ms)? CP-SAT feasibility of the whole model."""
import json, sys, time
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.bounds import Costs
from placer.formulations.cpsat_model import build_cpsat
name, secs = sys.argv[1], float(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); c = Costs.of(p)
for T in map(float, sys.argv[3:]):
    f = build_cpsat(p, None, 0.0, releases=(c.head, c.tail))
    m = f.model; m.clear_objective()
    m.add(f.cmax <= int(T / f.tick_ms))
    sv = cp_model.CpSolver(); sv.parameters.max_time_in_seconds = secs; sv.parameters.num_workers = 2
    t0 = time.time(); st = sv.solve(m)
    print(name, 'T', T, sv.status_name(st), '%.1fs' % (time.time() - t0), 'tick', f.tick_ms, 'slack', f.rounding_slack_ms, flush=True)
