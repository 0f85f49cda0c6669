import json, sys, collections
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
w = collections.Counter()
for k, op in enumerate(p.ops):
    kind = 'upd' if op.endswith('.update') else 'bwd' if op.endswith('.bwd') else 'fwd'
    w[(op.split('.')[0], kind)] += p.time_ms[k][0]
for c in ['stem', 'cell0', 'cell3', 'cell9', 'cell12', 'cell20', 'head', 'loss']:
    print(c, {k: round(w[(c, k)], 3) for k in ('fwd', 'bwd', 'upd')})
print('total', round(sum(w.values()), 3), 'fwd', round(sum(v for (c, k), v in w.items() if k == 'fwd'), 3), 'bwd', round(sum(v for (c, k), v in w.items() if k == 'bwd'), 3))
e = [x for x in p.edges if p.ops[x.src].startswith('cell12.') and not p.ops[x.src].endswith(('bwd','update'))]
print(sorted(round(x.bytes / 25e9 * 1e3 + 0.005, 3) for x in e))
