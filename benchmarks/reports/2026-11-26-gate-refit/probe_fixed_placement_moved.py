"""CP-SAT scheduling HEFT's placement with some groups moved (GROUP=DEVICE_INDEX ...), its
placement fixed, hinted by the justified re-timed schedule.

Usage: PYTHONPATH=. python probe_fixed_placement_moved.py NAME SECONDS [GROUP=D ...]"""
import json, sys
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
import placer.heuristics as H
from placer.schedule import retime, solution_from_starts
from placer.formulations.cpsat_model import build_cpsat
name, secs = sys.argv[1], float(sys.argv[2])
moves = [(a.split("=")[0], int(a.split("=")[1])) for a in sys.argv[3:]]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
hs = H.heft(p)
gid = {g.ops[ops[0]].group: x for x, ops in enumerate(p.groups)}
dev = list(hs.solution.device)
for grp, d in moves:
    for k in p.groups[gid[grp]]: dev[k] = d
hint = H.justify(p, retime(p, solution_from_starts(p, dev, hs.start_ms)))
print("hint", hint.makespan_ms)
f = build_cpsat(p, hint, 27.4, symmetry_breaking=False)
for gi, ops in enumerate(p.groups):
    for dd, lit in f.presence[gi].items():
        f.model.add(lit == (1 if dd == dev[ops[0]] else 0))
s = cp_model.CpSolver()
s.parameters.max_time_in_seconds = secs
s.parameters.num_workers = 2
code = s.solve(f.model)
print(moves, s.status_name(code), s.objective_value * f.tick_ms, s.best_objective_bound * f.tick_ms)
