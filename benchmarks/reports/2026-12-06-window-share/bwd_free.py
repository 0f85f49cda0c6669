"""Probe: the backward component alone (forward ops removed), engine det 60 s."""
import json, sys, collections
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name, secs, first = sys.argv[1], float(sys.argv[2]), sys.argv[3]
gj = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
succ = collections.defaultdict(list)
for e in gj['edges']: succ[e['src']].append(e['dst'])
fwd = set(); st = [first]
while st:
    k = st.pop()
    if k in fwd: continue
    fwd.add(k); st += succ[k]
gj['ops'] = [o for o in gj['ops'] if o['id'] not in fwd]
gj['edges'] = [e for e in gj['edges'] if e['src'] not in fwd and e['dst'] not in fwd]
print('ops left', len(gj['ops']))
g = GraphSpec.model_validate(gj)
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True))
print(name, 'bwd only', r.makespan_ms, r.lower_bound_ms, r.stats.best_from, r.stats.tight_bound)
json.dump(r.model_dump(mode="json"), open(f"/tmp/q/s28/bwdonly_{name}.json", "w"))
