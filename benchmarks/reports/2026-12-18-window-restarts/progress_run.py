"""Run one case deterministically (or wall) with a progress log: python prog.py CASE [wall] [key=value strategy overrides]"""
import json, sys, time
from pathlib import Path
from placer.engine import PlaceOptions, place, Strategy
from placer.schema import GraphSpec, HardwareSpec
name = sys.argv[1]
wall = "wall" in sys.argv[2:]
kw = {}
for a in sys.argv[2:]:
    if "=" in a:
        k, v = a.split("=", 1); kw[k] = eval(v)
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
t0 = time.perf_counter()
def progress(ev):
    if ev.heartbeat: return
    print(f"{time.perf_counter()-t0:7.1f}s inc {ev.incumbent_ms} bound {ev.bound_ms} {ev.phase} {ev.message}", flush=True)
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=not wall), progress=progress, strategy=Strategy(**kw) if kw else None)
s = r.stats
print(f"{name} {r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% wall {time.perf_counter()-t0:.0f}s")
print({k: v for k, v in s.model_dump().items() if v not in (None, 0, [], {})})
