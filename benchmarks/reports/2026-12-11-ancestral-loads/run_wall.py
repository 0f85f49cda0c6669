"""Wall-clock runs (two threads) of dumped cases, while whatever else runs on the machine:
    PYTHONPATH=. python benchmarks/reports/2026-12-11-ancestral-loads/run_wall.py SECONDS [--stitch] CASE...

--stitch adds the decomposition's figures: its bound, its parts, the stitch, resequenced and relabelled.
"""
import json
import os
import sys
import time
from pathlib import Path

from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec

seconds = float(sys.argv[1])
stitch = "--stitch" in sys.argv[2:]


def ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


for name in [a for a in sys.argv[2:] if a != "--stitch"]:
    g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
    h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
    load = os.getloadavg()[0]
    began = time.perf_counter()
    r = place(g, h, PlaceOptions(time_limit_s=seconds))
    s = r.stats
    print(f"{name:45s} {r.makespan_ms:9.4f} bound {r.lower_bound_ms:9.4f} gap {100 * r.gap:5.2f}% tight {s.tight_bound} "
          f"ancestral {s.ancestral_raised} {s.ancestral_stopped_by} load before {load:.1f} after {os.getloadavg()[0]:.1f} "
          f"wall {time.perf_counter() - began:.0f}s", flush=True)
    if stitch:
        print(f"    from {s.best_from}; decomposition bound {ms(s.decomposition_bound_ms)} parts {ms(s.decomposition_parts_ms)} "
              f"stitched {ms(s.decomposition_stitched_ms)} resequenced {ms(s.decomposition_resequenced_ms)} "
              f"relabelled {ms(s.decomposition_relabelled_ms)}", flush=True)
