"""run_cones.py NAME CONE_OPS: deterministic 60 s with another cone size."""
import json, sys, time
from dataclasses import replace
from placer.engine import PlaceOptions, place, Strategy
from placer.cone_bounds import ConeOptions
from placer.schema import GraphSpec, HardwareSpec
name, size = sys.argv[1], int(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True), strategy=Strategy(cones=ConeOptions(cone_ops=size)))
s = r.stats
print(name, size, f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% tight {s.tight_bound} cones {s.cone_solves} raised {s.cone_raised} {s.cone_stopped_by} wall {time.perf_counter()-t:.0f}", flush=True)
