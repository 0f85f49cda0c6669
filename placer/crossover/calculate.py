"""The crossover calculator: a validated config and SU^M values in, a report out.

For every total device count G it compares G-way DP (eq. 3) with every N-way DP x M-way MP
split with N x M = G (eq. 5), reports the eq. 6 threshold per M, and then the crossover
point, the best scales, WAP-style device-count advice and the energy of each configuration.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from placer.crossover.config import AdviceSpec, CrossoverConfig, EpochsSpec, ScalingSpec
from placer.crossover.model import (
    dp_speedup,
    hierarchical_allreduce_ms,
    hybrid_speedup,
    hybrid_threshold,
    loglog_interpolate,
    ring_allreduce_ms,
    scaling_efficiency_from_comm,
)

__all__ = [
    "RESULT_FORMAT",
    "Advice",
    "CrossoverReport",
    "Option",
    "Row",
    "epochs_at",
    "evaluate",
    "run",
    "scaling_efficiency_at",
]

RESULT_FORMAT = "placer.crossover-result/v1"


def epochs_at(spec: EpochsSpec, width: int, allow_extrapolation: bool = False) -> float:
    """E_N: epochs to converge with N-way DP, interpolated in log-log space.

    >>> spec = EpochsSpec(by_global_batch={2048: 4.0, 4096: 7.0}, mini_batch=64)
    >>> epochs_at(spec, 64)
    7.0
    """
    return loglog_interpolate(
        spec.points, spec.key(width), allow_extrapolation=allow_extrapolation, what=spec.field
    )


def scaling_efficiency_at(spec: ScalingSpec, width: int, allow_extrapolation: bool = False) -> float:
    """SE_N for N-way DP from a constant, a table (SE_1 = 1 implied) or the all-reduce model.

    >>> scaling_efficiency_at(ScalingSpec(table={8: 0.9}), 8)
    0.9
    >>> round(scaling_efficiency_at(ScalingSpec(table={4: 0.81}), 2), 12)  # log-log between 1 and 4
    0.9
    """
    if spec.constant is not None:
        return spec.constant
    if spec.table is not None:
        points = {1.0: 1.0, **{float(k): v for k, v in spec.table.items()}}
        value = loglog_interpolate(
            points, width, allow_extrapolation=allow_extrapolation, what="scaling_efficiency.table"
        )
        return min(value, 1.0)
    ring = spec.ring_allreduce
    assert ring is not None
    if ring.node_size is not None and ring.inter_node is not None:
        comm_ms = hierarchical_allreduce_ms(
            width,
            ring.gradient_bytes,
            ring.node_size,
            ring.bandwidth_gb_per_s,
            ring.latency_us,
            ring.inter_node.bandwidth_gb_per_s,
            ring.inter_node.latency_us,
        )
    else:
        comm_ms = ring_allreduce_ms(width, ring.gradient_bytes, ring.bandwidth_gb_per_s, ring.latency_us)
    return scaling_efficiency_from_comm(ring.step_time_ms, comm_ms, ring.overlap)


def _energy(devices: int, speedup: float, advice: AdviceSpec) -> dict[str, float]:
    """Energy to train = devices x power x time (time = one-device time / speedup)."""
    ratio = devices / speedup
    out = {"device_time_ratio": ratio}
    if advice.single_device_hours is not None:
        out["train_hours"] = advice.single_device_hours / speedup
        out["device_hours"] = advice.single_device_hours * ratio
        if advice.device_power_w is not None:
            out["energy_kwh"] = advice.single_device_hours * ratio * advice.device_power_w / 1000
    elif advice.device_power_w is not None:
        out["energy_kwh_per_single_device_hour"] = ratio * advice.device_power_w / 1000
    return out


@dataclass(frozen=True, slots=True)
class Option:
    """One way to use G devices: N-way DP of M-way MP workers (M = 1 is DP alone)."""

    n: int
    m: int
    epochs: float
    scaling_efficiency: float
    mp_speedup: float
    speedup: float
    threshold: float | None = None  # eq. 6, for M >= 2
    energy: dict[str, float] = field(default_factory=dict)

    @property
    def devices(self) -> int:
        return self.n * self.m

    @property
    def beats_dp(self) -> bool | None:
        return None if self.threshold is None else self.mp_speedup > self.threshold

    def brief(self) -> dict[str, Any]:
        return {"n": self.n, "m": self.m, "speedup": self.speedup}

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "n": self.n,
            "m": self.m,
            "epochs": self.epochs,
            "scaling_efficiency": self.scaling_efficiency,
            "mp_speedup": self.mp_speedup,
            "speedup": self.speedup,
        }
        if self.threshold is not None:
            out["threshold"] = self.threshold
            out["beats_dp"] = self.beats_dp
        out["energy"] = dict(self.energy)
        return out


@dataclass(frozen=True, slots=True)
class Row:
    """Everything about one total device count G."""

    devices: int
    dp_only: Option
    hybrids: tuple[Option, ...]

    @property
    def best_hybrid(self) -> Option | None:
        return max(self.hybrids, key=lambda o: o.speedup, default=None)

    @property
    def hybrid_gain(self) -> float | None:
        """Best hybrid over DP-only on the same G devices, minus 1."""
        best = self.best_hybrid
        return None if best is None else best.speedup / self.dp_only.speedup - 1

    @property
    def best(self) -> Option:
        best = self.best_hybrid
        return best if best is not None and best.speedup > self.dp_only.speedup else self.dp_only

    def to_dict(self) -> dict[str, Any]:
        best_hybrid = self.best_hybrid
        return {
            "devices": self.devices,
            "dp_only": self.dp_only.to_dict(),
            "hybrids": [o.to_dict() for o in self.hybrids],
            "thresholds": {str(o.m): o.threshold for o in self.hybrids},
            "best_hybrid": None if best_hybrid is None else best_hybrid.brief(),
            "hybrid_gain": self.hybrid_gain,
            "best": self.best.brief(),
        }


@dataclass(frozen=True, slots=True)
class Advice:
    """WAP-style: how many devices are worth using, on one speedup curve."""

    curve: str
    best_devices: int
    best_speedup: float
    fraction_of_best: float
    fraction_devices: int
    min_marginal_speedup_per_device: float
    marginal_devices: int
    marginal: tuple[tuple[int, int, float], ...]

    @property
    def recommended_devices(self) -> int:
        """The fewest devices at which either stopping rule fires."""
        return min(self.fraction_devices, self.marginal_devices)

    def to_dict(self) -> dict[str, Any]:
        return {
            "curve": self.curve,
            "best_devices": self.best_devices,
            "best_speedup": self.best_speedup,
            "fraction_of_best": self.fraction_of_best,
            "fraction_devices": self.fraction_devices,
            "min_marginal_speedup_per_device": self.min_marginal_speedup_per_device,
            "marginal_devices": self.marginal_devices,
            "recommended_devices": self.recommended_devices,
            "marginal_speedup_per_device": [
                {"from_devices": a, "to_devices": b, "per_device": v} for a, b, v in self.marginal
            ],
        }


def advise(curve: str, devices: list[int], speedups: list[float], spec: AdviceSpec) -> Advice:
    """Smallest G reaching `fraction_of_best` of the best speedup, and the G after which one
    more device adds less than `min_marginal_speedup_per_device` of speedup.

    >>> a = advise("dp_only", [1, 2, 4, 8], [1.0, 1.9, 3.0, 3.4], AdviceSpec(fraction_of_best=0.85))
    >>> a.fraction_devices, a.marginal_devices, a.recommended_devices
    (4, 4, 4)
    """
    best_i = max(range(len(devices)), key=lambda i: speedups[i])
    target = spec.fraction_of_best * speedups[best_i]
    fraction_devices = next(g for g, s in zip(devices, speedups) if s >= target - 1e-12)
    marginal = tuple(
        (devices[i], devices[i + 1], (speedups[i + 1] - speedups[i]) / (devices[i + 1] - devices[i]))
        for i in range(len(devices) - 1)
    )
    marginal_devices = next(
        (a for a, _, v in marginal if v < spec.min_marginal_speedup_per_device), devices[-1]
    )
    return Advice(
        curve=curve,
        best_devices=devices[best_i],
        best_speedup=speedups[best_i],
        fraction_of_best=spec.fraction_of_best,
        fraction_devices=fraction_devices,
        min_marginal_speedup_per_device=spec.min_marginal_speedup_per_device,
        marginal_devices=marginal_devices,
        marginal=marginal,
    )


@dataclass(frozen=True, slots=True)
class CrossoverReport:
    """The answer to a crossover config (placer.crossover-result/v1)."""

    name: str
    rows: tuple[Row, ...]
    mp_speedup_sources: dict[int, dict[str, Any]]
    advice: tuple[Advice, ...]
    epochs_1: float

    @property
    def crossover_devices(self) -> int | None:
        """The smallest G at which some hybrid beats DP alone on the same devices."""
        return next((r.devices for r in self.rows if (r.hybrid_gain or 0.0) > 0), None)

    @property
    def best_dp(self) -> Row:
        return max(self.rows, key=lambda r: r.dp_only.speedup)

    @property
    def best_hybrid(self) -> Option | None:
        return max((r.best_hybrid for r in self.rows if r.best_hybrid), key=lambda o: o.speedup, default=None)

    @property
    def best_hybrid_gain_over_best_dp(self) -> float | None:
        best = self.best_hybrid
        return None if best is None else best.speedup / self.best_dp.dp_only.speedup - 1

    def to_dict(self) -> dict[str, Any]:
        best_dp = self.best_dp
        best_hybrid = self.best_hybrid
        return {
            "format": RESULT_FORMAT,
            "name": self.name,
            "epochs_1": self.epochs_1,
            "mp_speedup": {str(m): src for m, src in sorted(self.mp_speedup_sources.items())},
            "rows": [r.to_dict() for r in self.rows],
            "crossover_devices": self.crossover_devices,
            "best_dp": {"devices": best_dp.devices, "speedup": best_dp.dp_only.speedup},
            "best_hybrid": None
            if best_hybrid is None
            else {"devices": best_hybrid.devices, **best_hybrid.brief()},
            "best_hybrid_gain_over_best_dp": self.best_hybrid_gain_over_best_dp,
            "advice": {a.curve: a.to_dict() for a in self.advice},
        }


def evaluate(
    config: CrossoverConfig,
    mp_speedup: Mapping[int, float],
    sources: Mapping[int, dict[str, Any]] | None = None,
) -> CrossoverReport:
    """Apply eqs. 3, 5 and 6 to every device count of `config` with the given SU^M by M."""
    allow = config.allow_extrapolation
    epochs_1 = epochs_at(config.epochs, 1, allow)

    def option(n: int, m: int) -> Option:
        e_n = epochs_at(config.epochs, n, allow)
        se_n = scaling_efficiency_at(config.scaling_efficiency, n, allow)
        su_m = 1.0 if m == 1 else float(mp_speedup[m])
        speedup = (
            hybrid_speedup(su_m, n, se_n, epochs_1, e_n) if m > 1 else dp_speedup(n, se_n, epochs_1, e_n)
        )
        return Option(n, m, e_n, se_n, su_m, speedup, energy=_energy(n * m, speedup, config.advice))

    rows = []
    for g in config.devices:
        dp = option(g, 1)
        hybrids = []
        for m in sorted(mp_speedup):
            if g % m or g < m:
                continue
            o = option(g // m, m)
            threshold = hybrid_threshold(m, o.scaling_efficiency, dp.scaling_efficiency, o.epochs, dp.epochs)
            hybrids.append(
                Option(o.n, o.m, o.epochs, o.scaling_efficiency, o.mp_speedup, o.speedup, threshold, o.energy)
            )
        rows.append(Row(g, dp, tuple(hybrids)))
    devices = [r.devices for r in rows]
    advice = (
        advise("best", devices, [r.best.speedup for r in rows], config.advice),
        advise("dp_only", devices, [r.dp_only.speedup for r in rows], config.advice),
    )
    given_sources = {m: {"source": "given", "speedup": float(s)} for m, s in mp_speedup.items()}
    given_sources.update(sources or {})
    return CrossoverReport(config.name, tuple(rows), given_sources, advice, epochs_1)


def run(
    config: CrossoverConfig,
    base_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    allow_files: bool = True,
) -> CrossoverReport:
    """Evaluate a config, first asking the placement engine for any SU^M it must compute.

    Relative file paths in the config resolve against `base_dir` first; a service that takes
    configs from the network passes `allow_files=False` (inline documents and presets only).
    """
    speedups: dict[int, float] = {m: float(s) for m, s in config.mp_speedup.given.items()}
    sources: dict[int, dict[str, Any]] = {}
    if config.mp_speedup.engine is not None:
        from placer.crossover.engine_speedup import engine_speedups

        for m, answer in engine_speedups(config.mp_speedup.engine, base_dir, progress, allow_files).items():
            speedups[m] = answer.speedup
            sources[m] = answer.to_dict()
    return evaluate(config, speedups, sources)
