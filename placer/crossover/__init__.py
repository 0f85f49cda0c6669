"""Hybrid DP x MP crossover calculator (Pal et al., Section 3; device-count advice after WAP).

- `model`: equations 1-6, log-log interpolation and the all-reduce cost model (pure functions);
- `config`: the `placer.crossover/v1` input document;
- `engine_speedup`: SU^M computed by the placement engine on M devices of a machine;
- `calculate`: config + SU^M -> report (`placer.crossover-result/v1`);
- `plot`: the report as a Figure-5-style chart (imported on demand: it loads matplotlib).
"""

from __future__ import annotations

from placer.crossover.calculate import CrossoverReport, evaluate, run
from placer.crossover.config import CrossoverConfig, parse_config
from placer.crossover.model import (
    dp_speedup,
    hierarchical_allreduce_ms,
    hybrid_speedup,
    hybrid_threshold,
    loglog_interpolate,
    ring_allreduce_ms,
    scaling_efficiency_from_comm,
    time_to_converge,
)

__all__ = [
    "CrossoverConfig",
    "CrossoverReport",
    "dp_speedup",
    "evaluate",
    "hierarchical_allreduce_ms",
    "hybrid_speedup",
    "hybrid_threshold",
    "loglog_interpolate",
    "parse_config",
    "ring_allreduce_ms",
    "run",
    "scaling_efficiency_from_comm",
    "time_to_converge",
]
