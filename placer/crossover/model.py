"""The mathematics of the hybrid DP x MP crossover (Pal et al., Section 3), as pure functions.

Speedups are relative to training on one device. Every function here takes plain numbers
and returns plain numbers: the config schema (`placer.crossover.config`) and the
calculator (`placer.crossover.calculate`) decide where the numbers come from.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from placer.errors import InputError

__all__ = [
    "dp_speedup",
    "hierarchical_allreduce_ms",
    "hybrid_speedup",
    "hybrid_threshold",
    "loglog_interpolate",
    "ring_allreduce_ms",
    "scaling_efficiency_from_comm",
    "time_to_converge",
]


def time_to_converge(step_time: float, steps_per_epoch: float, epochs: float) -> float:
    """Eq. 1: C = T x S x E (C in the unit of T).

    >>> time_to_converge(0.25, 1000, 4)
    1000.0
    """
    return step_time * steps_per_epoch * epochs


def dp_speedup(width: int, scaling_efficiency: float, epochs_1: float, epochs_n: float) -> float:
    """Eq. 3: SU_N = SE_N x N x E_1 / E_N, N-way data parallelism over one device.

    T_1/T_N is the scaling efficiency and S_1/S_N = N because the global batch grows with N.

    >>> dp_speedup(64, 1.0, 4.0, 7.0)
    36.57142857142857
    >>> dp_speedup(1, 1.0, 4.0, 4.0)
    1.0
    """
    return scaling_efficiency * width * epochs_1 / epochs_n


def hybrid_speedup(
    mp_speedup: float, width: int, scaling_efficiency: float, epochs_1: float, epochs_n: float
) -> float:
    """Eq. 5: SU_N^M = SU^M x SE_N x N x E_1 / E_N, N-way DP of M-way model-parallel workers.

    The global batch is that of N-way DP, so S and E are unchanged; MP only shortens T.

    >>> round(hybrid_speedup(1.32, 32, 1.0, 4.0, 4.0), 2)
    42.24
    """
    return mp_speedup * dp_speedup(width, scaling_efficiency, epochs_1, epochs_n)


def hybrid_threshold(
    m: int,
    scaling_efficiency_n: float,
    scaling_efficiency_mn: float,
    epochs_n: float,
    epochs_mn: float,
) -> float:
    """Eq. 6: the SU^M above which N x M-way hybrid beats (M x N)-way DP on the same devices.

    SU^M > M x (SE_MN / SE_N) x (E_N / E_MN). Inception-V3 at 64 GPUs (E_32 = 4, E_64 = 7):

    >>> hybrid_threshold(2, 1.0, 1.0, 4.0, 7.0)
    1.1428571428571428
    >>> 1.32 / hybrid_threshold(2, 1.0, 1.0, 4.0, 7.0)  # the hybrid's gain over DP, + 1
    1.155
    """
    return m * (scaling_efficiency_mn / scaling_efficiency_n) * (epochs_n / epochs_mn)


def loglog_interpolate(
    points: Mapping[float, float],
    x: float,
    *,
    allow_extrapolation: bool = False,
    what: str = "table",
) -> float:
    """y at x, piecewise linear in (log x, log y) between the given points.

    Epoch counts grow roughly as a power of the global batch, so straight lines on a log-log
    plot are the natural interpolant. A given point is returned exactly. Outside the given
    range the end segments are extended only when `allow_extrapolation` (a single point then
    extends as a constant); otherwise it is an InputError naming `what`.

    >>> loglog_interpolate({32: 4.0, 64: 7.0}, 64)
    7.0
    >>> round(loglog_interpolate({1: 1.0, 4: 4.0}, 2), 12)  # y = x is a line in log-log
    2.0
    >>> loglog_interpolate({1: 1.0, 4: 4.0}, 8)
    Traceback (most recent call last):
    ...
    placer.errors.InputError: table: no value for 8 (given 1..4); add a point or set allow_extrapolation
    >>> round(loglog_interpolate({1: 1.0, 4: 4.0}, 8, allow_extrapolation=True), 12)
    8.0
    """
    if not points:
        raise InputError(f"{what}: no points given")
    xs = sorted(points)
    if x in points:
        return float(points[x])
    if x <= 0:
        raise InputError(f"{what}: cannot interpolate at {x:g} (must be > 0)")
    if (x < xs[0] or x > xs[-1]) and not allow_extrapolation:
        raise InputError(
            f"{what}: no value for {x:g} (given {xs[0]:g}..{xs[-1]:g}); "
            "add a point or set allow_extrapolation"
        )
    if len(xs) == 1:
        return float(points[xs[0]])
    if x < xs[0]:
        lo, hi = xs[0], xs[1]
    elif x > xs[-1]:
        lo, hi = xs[-2], xs[-1]
    else:
        i = next(i for i in range(1, len(xs)) if xs[i] > x)
        lo, hi = xs[i - 1], xs[i]
    t = (math.log(x) - math.log(lo)) / (math.log(hi) - math.log(lo))
    log_y = math.log(points[lo]) + t * (math.log(points[hi]) - math.log(points[lo]))
    return math.exp(log_y)


def ring_allreduce_ms(width: int, size_bytes: float, bandwidth_gb_per_s: float, latency_us: float) -> float:
    """Ring all-reduce of `size_bytes` over `width` devices: 2(N-1)/N x D/B + 2(N-1) x L.

    A reduce-scatter then an all-gather, each N-1 steps moving D/N bytes over every ring link.

    >>> ring_allreduce_ms(1, 1e9, 10.0, 5.0)
    0.0
    >>> ring_allreduce_ms(4, 1e9, 10.0, 5.0)  # 1.5 x 100 ms + 6 x 5 us
    150.03
    """
    if width <= 1:
        return 0.0
    transfer_ms = 2 * (width - 1) / width * size_bytes / (bandwidth_gb_per_s * 1e9) * 1e3
    return transfer_ms + 2 * (width - 1) * latency_us * 1e-3


def hierarchical_allreduce_ms(
    width: int,
    size_bytes: float,
    node_size: int,
    intra_bandwidth_gb_per_s: float,
    intra_latency_us: float,
    inter_bandwidth_gb_per_s: float,
    inter_latency_us: float,
) -> float:
    """All-reduce across nodes: reduce-scatter in each node, ring across nodes, all-gather in each node.

    g = min(N, node_size) devices per node and k = ceil(N / g) nodes. Inside a node the
    reduce-scatter and all-gather together cost a g-way ring all-reduce of D. Across nodes,
    each of the g devices all-reduces its D/g shard with its k-1 peers; the g shards share
    the node's inter-node bandwidth, so the node moves 2(k-1)/k x D over it. One node is a
    plain ring.

    >>> hierarchical_allreduce_ms(8, 1e9, 8, 100.0, 0.0, 10.0, 0.0) == ring_allreduce_ms(8, 1e9, 100.0, 0.0)
    True
    >>> hierarchical_allreduce_ms(16, 1e9, 8, 100.0, 0.0, 10.0, 0.0)  # 17.5 ms in-node + 100 ms across
    117.5
    """
    if width <= 1:
        return 0.0
    per_node = min(width, node_size)
    nodes = math.ceil(width / per_node)
    intra_ms = ring_allreduce_ms(per_node, size_bytes, intra_bandwidth_gb_per_s, intra_latency_us)
    inter_ms = ring_allreduce_ms(nodes, size_bytes, inter_bandwidth_gb_per_s, inter_latency_us)
    return intra_ms + inter_ms


def scaling_efficiency_from_comm(step_time_ms: float, allreduce_ms: float, overlap: float = 0.0) -> float:
    """SE_N = T_1 / T_N, with T_N = T_1 plus the all-reduce time not hidden behind compute.

    `overlap` is the fraction of the all-reduce that runs under the backward pass; at most
    T_1 of it can hide.

    >>> scaling_efficiency_from_comm(100.0, 25.0)
    0.8
    >>> scaling_efficiency_from_comm(100.0, 25.0, overlap=1.0)
    1.0
    >>> scaling_efficiency_from_comm(10.0, 20.0, overlap=1.0)  # only 10 of the 20 ms can hide
    0.5
    """
    hidden_ms = min(overlap * allreduce_ms, step_time_ms)
    return step_time_ms / (step_time_ms + allreduce_ms - hidden_ms)
