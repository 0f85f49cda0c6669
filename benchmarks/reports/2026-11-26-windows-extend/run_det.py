"""Deterministic 60 s runs with Strategy overrides (the benchmark harness takes none):
python run_det.py "windows_share=0.8" CASE... (CASE: a name written by dump_cases.py)."""
import json
import sys
import time

from placer.engine import PlaceOptions, Strategy, place
from placer.schema import GraphSpec, HardwareSpec

overrides = {k: float(v) for k, v in (kv.split("=") for kv in sys.argv[1].split(","))} if sys.argv[1] else {}
for name in sys.argv[2:]:
    g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
    h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    t = time.perf_counter()
    r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True), strategy=Strategy(**overrides))
    print(name, sys.argv[1], f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100 * r.gap:.2f}% "
          f"from {r.stats.best_from} wall {time.perf_counter() - t:.0f}s", flush=True)
