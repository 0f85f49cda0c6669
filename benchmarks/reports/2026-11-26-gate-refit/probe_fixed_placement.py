"""CP-SAT on the engine's model with the placement of a result fixed, no hint: how long
the scheduling alone takes to find a schedule, and its bound.

Usage: PYTHONPATH=. python probe_fixed_placement.py NAME SECONDS RESULT.json"""
import json, sys, collections
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.heuristics import heft
from placer.formulations.cpsat_model import build_cpsat
name, secs, res = sys.argv[1], float(sys.argv[2]), sys.argv[3]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
r = json.load(open(res))
hs = heft(p)
f = build_cpsat(p, hs, 27.4, symmetry_breaking=False)
dev = {d.id: i for i, d in enumerate(h.devices)}
m = f.model
m.clear_hints()
# fix placement
for gi, ops in enumerate(p.groups):
    d = dev[r['placement'][p.ops[ops[0]]]]
    for dd, lit in f.presence[gi].items():
        m.add(lit == (1 if dd == d else 0))
s = cp_model.CpSolver()
s.parameters.max_time_in_seconds = secs
s.parameters.num_workers = 2
s.parameters.log_search_progress = True
code = s.solve(m)
print(s.status_name(code), s.objective_value * f.tick_ms, s.best_objective_bound * f.tick_ms, "result", r['makespan_ms'])
