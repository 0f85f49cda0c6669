import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.engine import PlaceOptions
from placer.engine import place, Strategy
import dataclasses
overrides = dict(kv.split("=") for kv in sys.argv[1].split(",")) if sys.argv[1] else {}
overrides = {k: float(v) for k, v in overrides.items()}
for name in sys.argv[2:]:
    g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
    h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    t = time.perf_counter()
    r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True), strategy=Strategy(**overrides))
    print(name, sys.argv[1], f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% from {r.stats.best_from} wall {time.perf_counter()-t:.0f}s", flush=True)
