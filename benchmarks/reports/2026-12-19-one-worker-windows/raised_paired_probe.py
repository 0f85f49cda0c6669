"""The paired-chains bound from the heads and tails the ancestral loads and the cones raised
(the engine computes it from the cheap ones only): python raised_paired_probe.py CASE...
Deterministic 60 s runs with placer.engine.head_tail_bounds_ms wrapped to add it."""
import json
import sys
from pathlib import Path

import placer.engine as engine
from placer import bounds
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec

plain = engine.head_tail_bounds_ms


def with_paired(problem, costs):
    named = plain(problem, costs)
    named["paired_chains"] = bounds._paired_chains_ms(problem, costs, max(named.values()))
    print(f"  raised heads/tails: {({k: round(v, 3) for k, v in named.items()})}", flush=True)
    return named


engine.head_tail_bounds_ms = with_paired
for name in sys.argv[1:]:
    g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
    h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
    r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
    print(f"{name} {r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100 * r.gap:.2f}% tight {r.stats.tight_bound}",
          flush=True)
