"""Deterministic 60 s engine runs of benchmark cases dumped as JSON (../2026-11-26-windows-extend/dump_cases.py,
../2026-12-04-unseen-graphs/dump_cases.py write them to /tmp/q/cases); a line per case, the result to /tmp/q/det.

    PYTHONPATH=. python benchmarks/reports/2026-12-11-ancestral-loads/run_det.py TAG CASE...
"""
import json
import os
import sys
import time
from pathlib import Path

from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec

tag = sys.argv[1]
os.makedirs("/tmp/q/det", exist_ok=True)
for name in sys.argv[2:]:
    g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
    h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
    began = time.perf_counter()
    r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
    s = r.stats
    print(f"{name:55s} {r.makespan_ms:10.4f} bound {r.lower_bound_ms:10.4f} gap {100 * r.gap:6.2f}% from {s.best_from} "
          f"tight {s.tight_bound} ancestral {getattr(s, 'ancestral_raised', None)} wall {time.perf_counter() - began:.0f}s", flush=True)
    Path(f"/tmp/q/det/{name}.{tag}.json").write_text(json.dumps(r.model_dump(mode="json")))
