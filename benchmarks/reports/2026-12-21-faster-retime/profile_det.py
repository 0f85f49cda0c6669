"""Where a deterministic 60 s run spends its Python time (cProfile), for one dumped case:

    PYTHONPATH=TREE python benchmarks/reports/2026-12-21-faster-retime/profile_det.py CASE

Prints the answer and the 15 functions with the largest cumulative time inside placer."""
import cProfile
import json
import pstats
import sys
from pathlib import Path

from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec

name = sys.argv[1]
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
profile = cProfile.Profile()
result = profile.runcall(place, g, h, PlaceOptions(time_limit_s=60, deterministic=True))
print(f"{name}: {result.makespan_ms:.4f} bound {result.lower_bound_ms:.4f}")
stats = pstats.Stats(profile)
stats.sort_stats("cumulative").print_stats(r"placer/(schedule|repair|decompose|window_search|local_search|heuristics)", 15)
