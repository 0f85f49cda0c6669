"""Probe: the answer's placement with the forward ops' durations set to zero (their edges kept): exact schedule."""
import json, sys
sys.path.insert(0, 'benchmarks/reports/2026-12-05-path-priority')
from fixed_placement import fixed_schedule
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
gj = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
r = json.load(open(res))
# forward component: ops reachable from 'images'
import collections
succ = collections.defaultdict(list)
for e in gj['edges']: succ[e['src']].append(e['dst'])
fwd = set(); st = [o['id'] for o in gj['ops'] if o['id'] == 'images']
while st:
    k = st.pop()
    if k in fwd: continue
    fwd.add(k); st += succ[k]
print('fwd ops', len(fwd))
gj2 = json.loads(json.dumps(gj))
gj2['ops'] = [o for o in gj2['ops'] if o['id'] not in fwd]
gj2['edges'] = [e for e in gj2['edges'] if e['src'] not in fwd and e['dst'] not in fwd]
g = GraphSpec.model_validate(gj2)
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dev = [p.device_index[r['placement'][op]] for op in p.ops]
print('bwd only, same placement:', fixed_schedule(p, dev, secs))
