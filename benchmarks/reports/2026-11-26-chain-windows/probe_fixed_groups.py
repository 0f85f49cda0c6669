"""CP-SAT with a group->device assignment fixed (JSON {"dev_of_group": {g: d}}), hinted by the
resequenced list schedule. Usage: fixgroups_probe.py NAME ASSIGN.json SECS"""
import json, sys
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.heuristics import resequence
from placer.formulations.cpsat_model import build_cpsat
name, asg, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dog = {int(k): v for k, v in json.load(open(asg))["dev_of_group"].items()}
device = [dog.get(p.group[k], 0) for k in range(p.n_ops)]
missing = [gi for gi in range(len(p.groups)) if gi not in dog]
print("groups not assigned (put on 0):", [p.ops[p.groups[gi][0]] for gi in missing][:10], len(missing))
hint = resequence(p, device)
print("list schedule", round(hint.makespan_ms, 4))
f = build_cpsat(p, hint, 0.0, symmetry_breaking=False)
m = f.model
for gi, ops in enumerate(p.groups):
    d = device[ops[0]]
    for dd, lit in f.presence[gi].items():
        m.add(lit == (1 if dd == d else 0))
s = cp_model.CpSolver()
s.parameters.max_time_in_seconds = secs
s.parameters.num_workers = 2
code = s.solve(m)
print(s.status_name(code), round(s.objective_value * f.tick_ms, 4), round(s.best_objective_bound * f.tick_ms, 4))
import collections, re
st = [s.value(f.start[k]) * f.tick_ms for k in range(p.n_ops)] if hasattr(f, 'start') else None
if st is None:
    print([a for a in dir(f) if not a.startswith('_')])
else:
    en = [st[k] + p.time_ms[k][device[k]] for k in range(p.n_ops)]
    busy = collections.defaultdict(float)
    for k in range(p.n_ops): busy[device[k]] += p.time_ms[k][device[k]]
    print("busy", {d: round(v, 3) for d, v in busy.items()})
    for k in sorted(range(p.n_ops), key=lambda k: st[k]):
        o = p.ops[k]
        if re.search(r"(attention\.query|ffn\.layernorm)(\.bwd)?$|update$|loss", o) and (not o.endswith("update") or en[k] > 13.0):
            print(f"{o:45s} d{device[k]} {st[k]:.4f} {en[k]:.4f}")
