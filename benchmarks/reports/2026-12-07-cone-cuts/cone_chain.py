import json, sys
from placer.budget import Budget
from placer.cone_bounds import ConeOptions, raise_by_cones
from placer.bounds import lower_bound_ms
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec
name, secs, n = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); b = Budget(1000, deterministic=True, threads=1)
known = lower_bound_ms(p); c = None
for i in range(n):
    c = raise_by_cones(p, b, secs, known, ConeOptions(), c, on_step=lambda m, x: print('   ', m, round(x, 4)))
    known = max(known, c.bound_ms)
    print(i, round(c.bound_ms, 4), c.solves, c.raised, c.stopped_by, round(b.spent(), 1), flush=True)
