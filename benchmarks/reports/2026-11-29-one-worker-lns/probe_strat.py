import json, sys, time, dataclasses
from placer.engine import PlaceOptions, place, Strategy
from placer.schema import GraphSpec, HardwareSpec
name, secs = sys.argv[1], float(sys.argv[2])
kw = {k: type(getattr(Strategy(), k))(v) for k, v in (a.split("=") for a in sys.argv[3:])}
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
def cb(pr):
    if pr.heartbeat: return
    print(f"{pr.elapsed_s:7.1f} {pr.phase:14s} inc {pr.incumbent_ms} bound {pr.bound_ms} {pr.message[:100]}", flush=True)
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True), progress=cb, strategy=Strategy(**kw))
print({k: v for k, v in r.stats.model_dump().items() if k.startswith("neighbourhood")}); print(name, kw, f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% from {r.stats.best_from}", flush=True)
