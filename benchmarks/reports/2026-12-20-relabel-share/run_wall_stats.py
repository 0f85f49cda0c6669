"""run_wall.py plus the decomposition's stitch figures"""
import json, os, sys, time
from pathlib import Path
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
seconds = float(sys.argv[1])
for name in sys.argv[2:]:
    g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
    h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
    load = os.getloadavg()[0]
    began = time.perf_counter()
    r = place(g, h, PlaceOptions(time_limit_s=seconds))
    s = r.stats
    f = lambda x: "-" if x is None else f"{x:.3f}"
    print(f"{name:40s} {r.makespan_ms:9.4f} bound {r.lower_bound_ms:9.4f} gap {100 * r.gap:5.2f}% from {s.best_from} "
          f"dec bound {f(s.decomposition_bound_ms)} parts {f(s.decomposition_parts_ms)} stitched {f(s.decomposition_stitched_ms)} "
          f"reseq {f(s.decomposition_resequenced_ms)} relab {f(s.decomposition_relabelled_ms)} "
          f"load {load:.1f}-{os.getloadavg()[0]:.1f} wall {time.perf_counter() - began:.0f}s", flush=True)
