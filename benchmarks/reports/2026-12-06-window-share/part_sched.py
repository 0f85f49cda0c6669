"""Probe: keep one component (ops reachable from FIRST), fix groups where RES puts them, exact schedule."""
import json, sys, collections
sys.path.insert(0, 'benchmarks/reports/2026-12-05-path-priority')
from fixed_placement import fixed_schedule
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
name, res, secs, first = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
gj = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
succ = collections.defaultdict(list)
for e in gj['edges']: succ[e['src']].append(e['dst'])
keep = set(); st = [first]
while st:
    k = st.pop()
    if k in keep: continue
    keep.add(k); st += succ[k]
gj['ops'] = [o for o in gj['ops'] if o['id'] in keep]
gj['edges'] = [e for e in gj['edges'] if e['src'] in keep and e['dst'] in keep]
pl = json.load(open(res))['placement']
g = GraphSpec.model_validate(gj); h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
# groups of the full graph: a kept op's device is its mate's
full = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
grp = {o['id']: o.get('group') for o in full['ops']}
bygrp = collections.defaultdict(list)
for o, gname in grp.items(): bygrp[gname].append(o)
dev = []
for op in p.ops:
    d = pl.get(op) or next((pl[x] for x in bygrp[grp[op]] if x in pl and grp[op] is not None), None) or 'gpu0'
    dev.append(p.device_index[d])
print(len(p.ops), 'ops:', fixed_schedule(p, dev, secs))
