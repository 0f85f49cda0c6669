import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.bounds import Costs, lower_bound_ms
from placer.budget import Budget
from placer.refutation import refute, RefuteOptions
name, secs, inc = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); c = Costs.of(p); lb = lower_bound_ms(p)
b = Budget(1000, deterministic=True)
t = time.time()
import os
opt = RefuteOptions(**json.loads(os.environ.get('OPT', '{}')))
import placer.refutation as R
_inf = R._infeasible
def spy(*a):
    v = _inf(*a); print('  T %.3f groups %d ops %d -> %s' % (a[5], len(a[6]), sum(len(p.groups[x]) for x in a[6]), v), flush=True); return v
R._infeasible = spy
r = refute(p, c, b, secs, lb, inc, opt)
print(name, 'lb %.3f -> %.3f' % (lb, r.bound_ms), r, 'work %.1f wall %.1f' % (b.work, time.time() - t))
