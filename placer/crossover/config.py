"""The `placer.crossover/v1` input document: pydantic at the edge, every error naming its field.

Shorthands: `"scaling_efficiency": 0.9` means `{"constant": 0.9}`, and an `mp_speedup`
object keyed by M (`{"2": 1.32}`) means `{"given": {"2": 1.32}}`.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, Strict, ValidationError, model_validator

from placer.errors import InputError
from placer.schema import MAX_BYTES, Identifier, Kind, Name, Text, format_validation_error

__all__ = [
    "CROSSOVER_FORMAT",
    "AdviceSpec",
    "CrossoverConfig",
    "EngineSpec",
    "EpochsSpec",
    "LinkRateSpec",
    "MpSpeedupSpec",
    "RingAllReduceSpec",
    "ScalingSpec",
    "needed_widths",
    "parse_config",
]

CROSSOVER_FORMAT = "placer.crossover/v1"


def _efficiency(value: float) -> float:
    if not 0 < value <= 1:
        raise ValueError(f"a scaling efficiency must be in (0, 1], got {value:g}")
    return value


def _model_parallel_width(value: int) -> int:
    if value < 2:
        raise ValueError(f"M must be >= 2 (M = 1 is data parallelism alone), got {value}")
    return value


# Values are strict JSON numbers ("2" and true are errors) with documented ranges; table keys are
# JSON object keys, i.e. strings, so they are read as integers ("8" -> 8) but bounded the same.
MAX_COUNT = 2**20      # devices, widths, mini-batch
MAX_VALUE = 1e15       # epochs, speedups, times, powers
MWidthKey = Annotated[int, Field(le=MAX_COUNT), AfterValidator(_model_parallel_width)]
MWidth = Annotated[MWidthKey, Strict()]
Efficiency = Annotated[float, Strict(), Field(allow_inf_nan=False), AfterValidator(_efficiency)]
Positive = Annotated[float, Strict(), Field(gt=0, le=MAX_VALUE, allow_inf_nan=False)]
NonNegative = Annotated[float, Strict(), Field(ge=0, le=MAX_VALUE, allow_inf_nan=False)]
CountKey = Annotated[int, Field(ge=1, le=MAX_COUNT)]
Count = Annotated[CountKey, Strict()]
Fraction = Annotated[float, Strict(), Field(gt=0, le=1, allow_inf_nan=False)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EpochsSpec(_Strict):
    """Epochs to converge, by data-parallel width N or by global batch (N x mini_batch)."""

    by_width: dict[CountKey, Positive] | None = None
    by_global_batch: dict[CountKey, Positive] | None = None
    mini_batch: Count | None = None

    @model_validator(mode="before")
    @classmethod
    def _not_flat(cls, raw: Any) -> Any:
        """A flat {key: epochs} map does not say what it is keyed by: say how to write it."""
        if (isinstance(raw, dict) and raw and not set(raw) & {"by_width", "by_global_batch", "mini_batch"}
                and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in raw.values())):
            example = ", ".join(f'"{k}": {v}' for k, v in list(raw.items())[:3])
            raise ValueError(
                f"a flat map of epochs ({{{example}}}) does not say what it is keyed by: write "
                f"{{\"by_width\": {{{example}}}}} when the keys are data-parallel widths N, or "
                f"{{\"by_global_batch\": {{...}}, \"mini_batch\": B}} when they are global batch sizes N x B"
            )
        return raw

    @model_validator(mode="after")
    def _one_table(self) -> EpochsSpec:
        given = [name for name in ("by_width", "by_global_batch") if getattr(self, name) is not None]
        if len(given) != 1:
            raise ValueError("give exactly one of by_width or by_global_batch")
        table = getattr(self, given[0])
        if not table:
            raise ValueError(f"{given[0]}: give at least one point")
        if self.by_global_batch is not None and self.mini_batch is None:
            raise ValueError("mini_batch: required with by_global_batch (global batch = N x mini_batch)")
        if self.by_width is not None and self.mini_batch is not None:
            raise ValueError("mini_batch: only meaningful with by_global_batch")
        return self

    @property
    def field(self) -> str:
        return "epochs.by_width" if self.by_width is not None else "epochs.by_global_batch"

    @property
    def points(self) -> dict[float, float]:
        """The table, keyed by what it is interpolated over (width or global batch)."""
        table = self.by_width if self.by_width is not None else self.by_global_batch
        assert table is not None
        return {float(k): float(v) for k, v in table.items()}

    def key(self, width: int) -> float:
        """The table key for DP width N: N itself, or the global batch N x mini_batch."""
        return float(width if self.by_width is not None else width * (self.mini_batch or 1))


class LinkRateSpec(_Strict):
    """A link class: bandwidth per direction and per-message latency."""

    bandwidth_gb_per_s: Positive
    latency_us: NonNegative = 0.0


class RingAllReduceSpec(_Strict):
    """SE_N from a ring all-reduce of the gradients against the single-device step time."""

    gradient_bytes: Annotated[int, Strict(), Field(ge=0, le=MAX_BYTES)]
    step_time_ms: Positive
    bandwidth_gb_per_s: Positive
    latency_us: NonNegative = 0.0
    node_size: Count | None = None
    inter_node: LinkRateSpec | None = None
    overlap: Annotated[float, Strict(), Field(ge=0, le=1, allow_inf_nan=False)] = 0.0

    @model_validator(mode="after")
    def _hierarchy_complete(self) -> RingAllReduceSpec:
        if (self.node_size is None) != (self.inter_node is None):
            raise ValueError(
                "give node_size and inter_node together (a hierarchical all-reduce needs both), or neither"
            )
        return self


class ScalingSpec(_Strict):
    """Scaling efficiency SE_N = T_1 / T_N: a constant, a table by N, or a ring all-reduce model."""

    constant: Efficiency | None = None
    table: dict[CountKey, Efficiency] | None = None
    ring_allreduce: RingAllReduceSpec | None = None

    @model_validator(mode="after")
    def _one_source(self) -> ScalingSpec:
        given = [n for n in ("constant", "table", "ring_allreduce") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError("give a number, or exactly one of constant, table, ring_allreduce")
        if self.table is not None:
            if not self.table:
                raise ValueError("table: give at least one point")
            if 1 in self.table and self.table[1] != 1.0:
                raise ValueError(f"table.1: SE_1 = T_1 / T_1 is 1 by definition, got {self.table[1]:g}")
        return self


class EngineSpec(_Strict):
    """Compute SU^M with the placement engine: a graph on the first M devices of a machine."""

    graph: Name | dict[str, Any] | None = None
    model: Kind | None = None
    batch: Count | None = None
    hardware: Name | dict[str, Any]
    m: list[MWidth] = Field(min_length=1)
    device_ids: dict[MWidthKey, list[Identifier]] = Field(default_factory=dict)
    solver: Kind = "cpsat"
    time_limit_s: Positive = 10.0
    # SU^M with split operators (docs/split.md): hybrid DP x MP against the best M-device plan
    split: bool = False

    @model_validator(mode="after")
    def _consistent(self) -> EngineSpec:
        if (self.graph is None) == (self.model is None):
            raise ValueError("give exactly one of graph (a file or document) or model (a zoo name)")
        if self.batch is not None and self.model is None:
            raise ValueError("batch: only meaningful with model (a zoo name)")
        for i in range(1, len(self.m)):
            if self.m[i] <= self.m[i - 1]:
                raise ValueError(f"m: must be strictly increasing, got {self.m}")
        for m, ids in self.device_ids.items():
            if m not in self.m:
                raise ValueError(f"device_ids.{m}: M={m} is not in m {self.m}")
            if len(ids) != m or len(set(ids)) != m:
                raise ValueError(f"device_ids.{m}: need {m} distinct device ids, got {ids}")
        return self


class MpSpeedupSpec(_Strict):
    """SU^M by M >= 2: given numbers, computed by the engine, or both for different M."""

    given: dict[MWidthKey, Positive] = Field(default_factory=dict)
    engine: EngineSpec | None = None

    @model_validator(mode="after")
    def _some(self) -> MpSpeedupSpec:
        if not self.given and self.engine is None:
            raise ValueError("give SU^M for at least one M >= 2 (given, or engine)")
        if self.engine is not None:
            both = sorted(set(self.given) & set(self.engine.m))
            if both:
                raise ValueError(f"M={both} is both given and asked of the engine; pick one")
        return self

    @property
    def m_values(self) -> list[int]:
        return sorted(set(self.given) | set(self.engine.m if self.engine else []))


class AdviceSpec(_Strict):
    """WAP-style device-count advice and energy accounting."""

    fraction_of_best: Fraction = 0.9
    min_marginal_speedup_per_device: NonNegative = 0.5
    device_power_w: Positive | None = None
    single_device_hours: Positive | None = None


class CrossoverConfig(_Strict):
    """A DP x MP crossover question (placer.crossover/v1)."""

    format: Literal["placer.crossover/v1"] = CROSSOVER_FORMAT
    name: Name = "crossover"
    description: Text | None = None
    devices: list[Count] = Field(min_length=1)
    epochs: EpochsSpec
    scaling_efficiency: ScalingSpec = Field(default_factory=lambda: ScalingSpec(constant=1.0))
    mp_speedup: MpSpeedupSpec
    allow_extrapolation: Annotated[bool, Strict()] = False
    advice: AdviceSpec = Field(default_factory=AdviceSpec)

    @model_validator(mode="before")
    @classmethod
    def _shorthands(cls, raw: Any) -> Any:
        if not isinstance(raw, dict):
            return raw
        raw = dict(raw)
        se = raw.get("scaling_efficiency")
        if isinstance(se, (int, float)) and not isinstance(se, bool):
            raw["scaling_efficiency"] = {"constant": se}
        mp = raw.get("mp_speedup")
        if isinstance(mp, dict) and mp and not ({"given", "engine"} & set(mp)):
            raw["mp_speedup"] = {"given": mp}
        return raw

    @model_validator(mode="after")
    def _devices_and_ranges(self) -> CrossoverConfig:
        for i in range(1, len(self.devices)):
            if self.devices[i] <= self.devices[i - 1]:
                raise ValueError(
                    f"devices: must be strictly increasing, got {self.devices[i]} after "
                    f"{self.devices[i - 1]} (devices[{i}])"
                )
        if not self.allow_extrapolation:
            self._check_coverage()
        return self

    def _check_coverage(self) -> None:
        """Every width the calculation needs lies inside the given tables (fail before any solve)."""
        epochs = self.epochs.points
        lo, hi = min(epochs), max(epochs)
        unit = "width" if self.epochs.by_width is not None else "global batch"
        for width, why in needed_widths(self.devices, self.mp_speedup.m_values).items():
            key = self.epochs.key(width)
            if not lo <= key <= hi:
                raise ValueError(
                    f"{self.epochs.field}: no epochs for {unit} {key:g} (needed for {why}); given "
                    f"{unit}s {lo:g}..{hi:g}; add a point or set allow_extrapolation"
                )
        table = self.scaling_efficiency.table
        if table is not None:
            lo, hi = min([1, *table]), max(table)
            for width, why in needed_widths(self.devices, self.mp_speedup.m_values).items():
                if not lo <= width <= hi:
                    raise ValueError(
                        f"scaling_efficiency.table: no efficiency for width {width} (needed for {why}); "
                        f"given widths {lo}..{hi}; add a point or set allow_extrapolation"
                    )


def needed_widths(devices: list[int], m_values: list[int]) -> dict[int, str]:
    """Every DP width the calculation evaluates, with the first reason it is needed.

    >>> needed_widths([2, 4], [2])
    {1: 'E_1, the one-device reference', 2: 'DP-only on 2 devices', 4: 'DP-only on 4 devices'}
    """
    widths: dict[int, str] = {1: "E_1, the one-device reference"}
    for g in devices:
        widths.setdefault(g, f"DP-only on {g} devices")
        for m in m_values:
            if g % m == 0:
                widths.setdefault(g // m, f"{g // m}-way DP x {m}-way MP on {g} devices")
    return dict(sorted(widths.items()))


def parse_config(raw: Any) -> CrossoverConfig:
    """Validate a placer.crossover/v1 document; an InputError names every bad field."""
    if not isinstance(raw, dict):
        raise InputError(f"crossover: expected a JSON object, got {type(raw).__name__}")
    try:
        return CrossoverConfig.model_validate(raw)
    except ValidationError as exc:
        raise InputError(format_validation_error(exc, raw, "crossover")) from None
