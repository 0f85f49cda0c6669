"""the result's placement pinned; engine run in wall-clock mode (pure scheduling): probe_fixed_placement.py NAME RESULT SECS (wall clock)"""
import json, sys, time
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
gd = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
r = json.load(open(res))
for op in gd["ops"]:
    op["device"] = r["placement"][op["id"]]
g = GraphSpec.model_validate(gd)
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
def cb(pr):
    if pr.heartbeat: return
    print(f"{pr.elapsed_s:7.1f} {pr.phase:14s} inc {pr.incumbent_ms} bound {pr.bound_ms} {pr.message[:100]}", flush=True)
t = time.perf_counter()
r2 = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=False), progress=cb)
print("fixed", r2.makespan_ms, r2.lower_bound_ms, r2.stats.best_from, time.perf_counter() - t)
