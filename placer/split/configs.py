"""The configurations the split planner may choose from, per unit (a colocation group, or an
op on its own): degree 1 on each allowed device (today's placement) and, for units whose every
op may be split along a dimension, that dimension at degree d on a block of d devices.

Blocks are consecutive devices of the hardware file's listing, aligned to d (d must divide the
device count): on a DGX-1 the blocks of 4 are its two NVLink quads. Degrees must divide the
dimension's size in every op of the unit. Units lighter than `SplitOptions.heavy_share` of the
total work get only the full-width split (every device), which keeps the model small and still
contains pure data parallelism.
"""
from __future__ import annotations

from dataclasses import dataclass

from placer.model import Problem
from placer.split.semantics import UPDATE_KINDS, split_dims

__all__ = ["Config", "SplitOptions", "unit_configs"]


@dataclass(frozen=True)
class SplitOptions:
    """Every threshold of the split planner, in one place (docs/split.md)."""

    dims: tuple[str, ...] = ("sample", "channel", "input_channel", "heads", "vocab")
    heavy_share: float = 0.02        # units with at least this share of the total work get block configs
    max_degree: int | None = None    # None: up to the number of devices
    task_overhead_ms: float = 0.005  # added to each task of a split profiled op (launch, sync)
    placement_share: float = 0.3     # of the time limit, for the placement-only engine
    moves_share: float = 0.15        # of the time limit, for configuration moves (placer.split.moves) ...
    moves_max_evaluations: int = 3000  # ... at most this many re-timings (the cap in deterministic mode)
    max_config_terms: int = 2_000_000  # precedence terms above this: heavy units lose their block configs


@dataclass(frozen=True)
class Config:
    """A unit's choice: `dim` None and one device (degree 1), or a dimension, degree and devices."""

    dim: str | None
    devices: tuple[int, ...]

    @property
    def degree(self) -> int:
        return len(self.devices)

    def label(self, device_names: list[str]) -> str:
        names = ",".join(device_names[d] for d in self.devices)
        return names if self.dim is None else f"{self.dim}x{self.degree}@{names}"


def _divisors(n: int) -> list[int]:
    return [d for d in range(2, n + 1) if n % d == 0]


def unit_dims(problem: Problem, ops: list[int], options: SplitOptions) -> dict[str, int]:
    """The dimensions every op of the unit may be split along, with the gcd of their sizes."""
    from math import gcd

    spec = {op.id: op for op in problem.graph.ops}
    common: dict[str, int] | None = None
    for k in ops:
        op = spec[problem.ops[k]]
        if op.kind in UPDATE_KINDS:
            continue  # an update follows its group
        if op.device is not None or not op.dims:
            return {}
        allowed = {d: op.dims[d] for d in split_dims(op.kind) if d in op.dims and d in options.dims}
        if common is None:
            common = allowed
        else:
            common = {d: gcd(s, allowed[d]) for d, s in common.items() if d in allowed}
    return common or {}


def unit_configs(problem: Problem, ops: list[int], allowed: list[int], heavy: bool,
                 options: SplitOptions) -> list[Config]:
    """Degree 1 on each allowed device, then the split configurations (see the module doc)."""
    configs = [Config(None, (d,)) for d in allowed]
    n = problem.n_devices
    if len(allowed) < n:
        return configs  # pinned
    max_degree = min(n, options.max_degree or n)
    for dim, size in unit_dims(problem, ops, options).items():
        for degree in _divisors(n):
            if degree > max_degree or size % degree:
                continue
            if not heavy and degree != max_degree:
                continue
            for first in range(0, n, degree):
                configs.append(Config(dim, tuple(range(first, first + degree))))
    return configs
