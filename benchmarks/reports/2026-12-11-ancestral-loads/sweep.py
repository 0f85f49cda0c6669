"""Bound of the ancestral loads alone (cheap heads and tails raised, no CP-SAT) by region size and
delay levels, with its CPU time:

    PYTHONPATH=. python benchmarks/reports/2026-12-11-ancestral-loads/sweep.py CASE...
"""
import json
import sys
import time
from pathlib import Path

from placer.ancestral_loads import AncestralOptions, raise_by_ancestral_loads
from placer.bounds import Costs, head_tail_bounds_ms
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec

for name in sys.argv[1:]:
    g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
    h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
    p = build_problem(g, h)
    c = Costs.of(p)
    for region, levels in ((50, 16), (100, 16), (200, 16), (100, 4), (100, 8), (100, 32)):
        began = time.process_time()
        r = raise_by_ancestral_loads(p, c, 0.0, 60.0, options=AncestralOptions(region_ops=region, delay_levels=levels))
        print(f"{name:45s} K={region:3d} L={levels:2d} {max(head_tail_bounds_ms(p, r.costs).values()):9.4f} "
              f"cpu {time.process_time() - began:4.1f}s", flush=True)
