"""run_strat.py NAME SECS: one case (/tmp/q/cases), deterministic, Strategy overrides from $STRAT (JSON); result to $RES_DIR."""
import json, os, sys, time
from placer.engine import PlaceOptions, place, Strategy
from placer.schema import GraphSpec, HardwareSpec
name, secs = sys.argv[1], float(sys.argv[2])
over = json.loads(os.environ.get("STRAT", "{}"))
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True), strategy=Strategy(**over))
print(name, secs, f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% from {r.stats.best_from} tight {r.stats.tight_bound} wall {time.perf_counter()-t:.0f}", flush=True)
json.dump(r.model_dump(mode="json"), open(f"{os.environ['RES_DIR']}/res_{name}_{int(secs)}_det.json", "w"))
