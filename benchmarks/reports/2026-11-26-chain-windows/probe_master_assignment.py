"""The chain_loads master's optimal assignment (groups -> devices) of a det run; then CP-SAT with
that placement fixed. Usage: master_probe.py NAME SECS"""
import json, sys, re, collections
import placer.decompose as D
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name, secs = sys.argv[1], float(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
orig = D.chain_loads
cap = {}
def wrapped(problem, parts, budget, limit):
    o = budget.solve_cpsat
    def solve(m, s, **kw):
        run, solver = o(m, s, **kw)
        cap['m'], cap['solver'], cap['run'] = m, solver, run
        return run, solver
    budget.solve_cpsat = solve
    try:
        out = orig(problem, parts, budget, limit)
    finally:
        budget.solve_cpsat = o
    cap['p'], cap['parts'], cap['bound'] = problem, parts, out
    return out
D.chain_loads = wrapped
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True))
print("result", r.makespan_ms, r.lower_bound_ms, "master", cap.get('bound'), cap['run'].status)
p, m, solver = cap['p'], cap['m'], cap['solver']
vals = solver.response_proto.solution
dev_of = {}
lits = {}
for i, v in enumerate(m.proto.variables):
    mm = re.match(r"y_(\d+)_(\d+)", v.name)
    if mm and vals[i]: dev_of[int(mm.group(1))] = int(mm.group(2))
    elif v.name and not mm and vals[i]: lits[v.name] = vals[i]
print("extras on:", {k: v for k, v in lits.items() if not k.startswith("u_")})
c = collections.defaultdict(collections.Counter)
for gi, d in dev_of.items():
    for k in p.groups[gi]:
        mt = re.match(r'(encoder\.layer\d+|embeddings|pooler|classifier|loss)', p.ops[k])
        c[mt.group(1) if mt else p.ops[k]][d] += 1
for k, v in c.items(): print(k, dict(v))
json.dump({"dev_of_group": dev_of}, open(f"/tmp/q/master_{name}.json", "w"))
parts = cap['parts']
seen = set()
for c in range(len(parts.components)):
    key = (round(parts.bound_ms[c], 6), round(parts.spread_bound_ms[c], 6), round(parts.switched_bound_ms[c], 6))
    print(c, [len(parts.segments[j]) for j in parts.components[c]], key)
