import json, sys, collections
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.bounds import Costs
name, res = sys.argv[1], sys.argv[2]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); c = Costs.of(p)
r = json.load(open(res)); S = {s['op']: s for s in r['schedule']}
idx = {op: i for i, op in enumerate(p.ops)}
prev = (0, 0)
for op in p.ops:
    if op.endswith('concat') or op.endswith('concat.bwd') or op.endswith('in0.relu.bwd'):
        k = idx[op]; e, hd = S[op]['end_ms'], c.head[k] + c.fastest[k]
        devs = collections.Counter(S[o]['device'] for o in p.ops if o.startswith(op.split('.')[0] + '.') and (o.endswith('bwd') == op.endswith('bwd')))
        print(f"{op:28s} end {e:8.3f} (+{e-prev[0]:6.3f}) head-end {hd:8.3f} (+{hd-prev[1]:6.3f}) {dict(devs)}")
        prev = (e, hd)
