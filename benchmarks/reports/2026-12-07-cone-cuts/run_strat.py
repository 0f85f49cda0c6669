"""run_strat.py NAME SECS [wall]: one case (/tmp/q/cases), deterministic (with `wall`: wall clock,
2 threads), Strategy overrides from $STRAT (JSON; "windows", "cones" and "refute" hold WindowOptions,
ConeOptions and RefuteOptions overrides); result to $RES_DIR."""
import json, os, sys, time
from dataclasses import replace
from placer.engine import PlaceOptions, place, Strategy
from placer.schema import GraphSpec, HardwareSpec
from placer.window_search import WindowOptions
from placer.cone_bounds import ConeOptions
from placer.refutation import RefuteOptions

name, secs = sys.argv[1], float(sys.argv[2])
deterministic = sys.argv[3:] != ["wall"]
over = json.loads(os.environ.get("STRAT", "{}"))
strategy = Strategy(**{**over, "windows": replace(WindowOptions(), **over.get("windows", {})),
                        "cones": replace(ConeOptions(), **over.get("cones", {})),
                        "refute": replace(RefuteOptions(), **over.get("refute", {}))})
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=deterministic), strategy=strategy)
print(name, secs, f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% from {r.stats.best_from} tight {r.stats.tight_bound} wall {time.perf_counter()-t:.0f}", flush=True)
json.dump(r.model_dump(mode="json"), open(f"{os.environ['RES_DIR']}/res_{name}_{int(secs)}_{'det' if deterministic else 'wall'}.json", "w"))
