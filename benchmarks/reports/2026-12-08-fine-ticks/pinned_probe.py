"""pinned.py NAME RESULT SECS [group=device ...]: the result's placement pinned (with changes), re-solved det."""
import json, sys
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
changes = dict(a.split('=') for a in sys.argv[4:])
gj = json.load(open(f"/tmp/q/cases/{name}.graph.json")); hj = json.load(open(f"/tmp/q/cases/{name}.hw.json"))
r = json.load(open(res))
for o in gj['ops']:
    o['device'] = r['placement'][o['id']]
    for pre, dev in changes.items():
        if o['id'].startswith(pre): o['device'] = dev
r2 = place(GraphSpec.model_validate(gj), HardwareSpec.model_validate(hj), PlaceOptions(time_limit_s=secs, deterministic=True))
print(changes, f"{r2.makespan_ms:.4f} bound {r2.lower_bound_ms:.4f} {r2.status} from {r2.stats.best_from}")
