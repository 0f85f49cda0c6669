"""The wire and file formats: placer.graph/v1, placer.hardware/v1, placer.result/v1.

pydantic models at the edge; the domain (placer.model) works on plain dataclasses.
Every rejection names the field and the op, edge or device it is about.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from placer.errors import InputError, InvalidGraphError, InvalidHardwareError
from placer.jsondoc import parse_json
from placer.stats import SolveStats

__all__ = [
    "GRAPH_FORMAT",
    "HARDWARE_FORMAT",
    "LIMITS",
    "RESULT_FORMAT",
    "Baselines",
    "CollectiveEntry",
    "DeviceSpec",
    "EdgeSpec",
    "GraphSpec",
    "HardwareSpec",
    "LinkSpec",
    "OpSpec",
    "ResultSpec",
    "ScheduleEntry",
    "SimulationSummary",
    "SolveStats",
    "SplitEntry",
    "SwitchSpec",
    "TransferEntry",
    "error_message",
    "load_json",
    "parse_graph",
    "parse_hardware",
    "parse_result",
    "relative_gap",
]

GRAPH_FORMAT = "placer.graph/v1"
HARDWARE_FORMAT = "placer.hardware/v1"
RESULT_FORMAT = "placer.result/v1"

# Every number has a documented range (README "Input format"), wide enough for any machine and
# model and narrow enough that every derived time stays a finite float and every memory sum an
# int64 for CP-SAT: 10**400 bytes or 1e-300 GB/s are refused naming the field, not a 500 later.
MAX_BYTES = 10**15            # memory_bytes, edge bytes: 1 PB
MAX_TIME_MS = 1e9             # an op's time_ms (11.6 days)
MAX_LATENCY_US = 1e9          # a link's latency (1,000 s)
MAX_WORK = 1e24               # an op's flops and bytes_accessed
MIN_RATE, MAX_RATE = 1e-6, 1e6  # peak_tflops, memory_bandwidth_gb_per_s, bandwidth_gb_per_s
MIN_EFFICIENCY = 1e-3
MAX_ID_CHARS, MAX_NAME_CHARS, MAX_TEXT_CHARS = 256, 1024, 4096
SPLIT_DIMS = ("sample", "channel", "input_channel", "heads", "vocab")  # placer.split.semantics
LIMITS = {"bytes": MAX_BYTES, "time_ms": MAX_TIME_MS, "latency_us": MAX_LATENCY_US, "work": MAX_WORK,
          "rate": (MIN_RATE, MAX_RATE), "efficiency": (MIN_EFFICIENCY, 1.0), "id_chars": MAX_ID_CHARS,
          "name_chars": MAX_NAME_CHARS, "text_chars": MAX_TEXT_CHARS}

# strict (model config below): a number field takes JSON numbers only (true and "1" are errors;
# ints are fine where floats are expected), a string field takes strings only
TimeMs = Annotated[float, Field(ge=0, le=MAX_TIME_MS, allow_inf_nan=False)]
Work = Annotated[float, Field(ge=0, le=MAX_WORK, allow_inf_nan=False)]
Rate = Annotated[float, Field(ge=MIN_RATE, le=MAX_RATE, allow_inf_nan=False)]
Bytes = Annotated[int, Field(ge=0, le=MAX_BYTES)]
Identifier = Annotated[str, Field(min_length=1, max_length=MAX_ID_CHARS)]
Kind = Annotated[str, Field(max_length=MAX_ID_CHARS)]
Name = Annotated[str, Field(max_length=MAX_NAME_CHARS)]
Text = Annotated[str, Field(max_length=MAX_TEXT_CHARS)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# --------------------------------------------------------------------------- graph


class OpSpec(_Strict):
    """One operation of the training step."""

    id: Identifier
    time_ms: TimeMs | None = None
    flops: Work | None = None
    bytes_accessed: Work | None = None
    memory_bytes: Bytes = 0
    kind: Kind | None = None
    group: Identifier | None = None
    device: Identifier | None = None
    # split operators (DESIGN.md "Split operators"): the output's dimensions with their sizes and
    # the bytes of weights the op reads; an op without `dims` is never split
    dims: dict[Identifier, Annotated[int, Field(ge=1, le=MAX_BYTES)]] | None = Field(
        None, exclude_if=lambda v: v is None)
    weight_bytes: Bytes | None = Field(None, exclude_if=lambda v: v is None)

    @model_validator(mode="after")
    def _has_a_cost(self) -> OpSpec:
        if self.time_ms is None and self.flops is None:
            raise ValueError(f"op {self.id!r} has neither time_ms nor flops")
        if self.dims is not None:
            unknown = sorted(set(self.dims) - set(SPLIT_DIMS))
            if unknown:
                raise ValueError(f"op {self.id!r}: dims: unknown dimension {unknown[0]!r} "
                                 f"(known: {', '.join(SPLIT_DIMS)})")
        return self


class EdgeSpec(_Strict):
    """A tensor from one op to another; `bytes` is its size."""

    src: Identifier
    dst: Identifier
    bytes: Bytes = 0


class GraphSpec(_Strict):
    """A training step as a dataflow graph (placer.graph/v1)."""

    format: Literal["placer.graph/v1"] = GRAPH_FORMAT
    name: Name = "graph"
    ops: list[OpSpec] = Field(min_length=1)
    edges: list[EdgeSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _is_a_dag(self) -> GraphSpec:
        counts = Counter(op.id for op in self.ops)
        dupes = sorted(i for i, n in counts.items() if n > 1)
        if dupes:
            raise ValueError(f"duplicate op ids: {', '.join(map(repr, dupes))}")
        seen: set[tuple[str, str]] = set()
        for i, e in enumerate(self.edges):
            for end, name in (("src", e.src), ("dst", e.dst)):
                if name not in counts:
                    raise ValueError(f"edges[{i}] ({e.src} -> {e.dst}): {end} names unknown op {name!r}")
            if e.src == e.dst:
                raise ValueError(f"edges[{i}] ({e.src} -> {e.dst}): an op cannot feed itself")
            if (e.src, e.dst) in seen:
                raise ValueError(f"edges[{i}] ({e.src} -> {e.dst}): duplicate edge")
            seen.add((e.src, e.dst))
        g = nx.DiGraph((e.src, e.dst) for e in self.edges)
        try:
            cycle = nx.find_cycle(g)
        except nx.NetworkXNoCycle:
            cycle = None
        if cycle:
            path = " -> ".join([u for u, _ in cycle] + [cycle[0][0]])
            raise ValueError(f"the graph has a cycle: {path}")
        pins: dict[str, set[str]] = {}
        for op in self.ops:
            if op.group is not None and op.device is not None:
                pins.setdefault(op.group, set()).add(op.device)
        for group, devices in pins.items():
            if len(devices) > 1:
                raise ValueError(f"group {group!r} pins its ops to different devices: {sorted(devices)}")
        return self


# --------------------------------------------------------------------------- hardware


class DeviceSpec(_Strict):
    """A compute device (GPU). Rates are needed only for ops costed analytically."""

    id: Identifier
    kind: Kind = "gpu"
    memory_bytes: Bytes | None = None
    peak_tflops: Rate | None = None
    memory_bandwidth_gb_per_s: Rate | None = None
    efficiency: Annotated[float, Field(ge=MIN_EFFICIENCY, le=1, allow_inf_nan=False)] = 1.0


class SwitchSpec(_Strict):
    """A router node: forwards, computes nothing."""

    id: Identifier
    kind: Kind | None = None


class LinkSpec(_Strict):
    """A bidirectional, full-duplex link; bandwidth per direction."""

    a: Identifier
    b: Identifier
    bandwidth_gb_per_s: Rate
    latency_us: Annotated[float, Field(ge=0, le=MAX_LATENCY_US, allow_inf_nan=False)] = 0.0
    kind: Kind | None = None


class HardwareSpec(_Strict):
    """A machine as a hardware graph (placer.hardware/v1)."""

    format: Literal["placer.hardware/v1"] = HARDWARE_FORMAT
    name: Name = "hardware"
    description: Text | None = None
    source: Text | None = None
    devices: list[DeviceSpec] = Field(min_length=1)
    switches: list[SwitchSpec] = Field(default_factory=list)
    links: list[LinkSpec] = Field(default_factory=list)

    @model_validator(mode="after")
    def _is_connected(self) -> HardwareSpec:
        counts = Counter([d.id for d in self.devices] + [s.id for s in self.switches])
        dupes = sorted(i for i, n in counts.items() if n > 1)
        if dupes:
            raise ValueError(f"duplicate device/switch ids: {', '.join(map(repr, dupes))}")
        seen: set[frozenset[str]] = set()
        for i, link in enumerate(self.links):
            for end, name in (("a", link.a), ("b", link.b)):
                if name not in counts:
                    raise ValueError(f"links[{i}] ({link.a} - {link.b}): {end} names unknown node {name!r}")
            if link.a == link.b:
                raise ValueError(f"links[{i}] ({link.a} - {link.b}): a link must join two nodes")
            key = frozenset((link.a, link.b))
            if key in seen:
                raise ValueError(
                    f"links[{i}] ({link.a} - {link.b}): duplicate link; "
                    "give one link with the summed bandwidth instead"
                )
            seen.add(key)
        g = nx.Graph()
        g.add_nodes_from(counts)
        g.add_edges_from((link.a, link.b) for link in self.links)
        first = self.devices[0].id
        reachable = nx.node_connected_component(g, first)
        cut_off = [d.id for d in self.devices if d.id not in reachable]
        if cut_off:
            raise ValueError(
                f"devices {', '.join(map(repr, cut_off))} have no path of links to device {first!r}: "
                "every device must be able to reach every other"
            )
        return self


# --------------------------------------------------------------------------- result


class ScheduleEntry(BaseModel):
    model_config = ConfigDict(strict=True)

    op: Identifier
    device: Identifier
    start_ms: float
    end_ms: float
    task: int | None = Field(None, exclude_if=lambda v: v is None, description="task index of a split op")


class TransferEntry(BaseModel):
    model_config = ConfigDict(strict=True)

    src: Identifier
    dst: Identifier
    bytes: int
    route: list[Identifier]
    start_ms: float
    end_ms: float
    task: int | None = Field(None, exclude_if=lambda v: v is None,
                             description="the destination op's task (split plans)")
    src_task: int | None = Field(None, exclude_if=lambda v: v is None,
                                 description="the source op's task (split plans)")


class Baselines(BaseModel):
    """The makespans of the simple placements every solve starts from (null: none fits)."""

    single_device_ms: float | None = Field(None, description="everything on the best single device")
    heft_ms: float | None = Field(None, description="HEFT list scheduling")
    critical_path_ms: float | None = Field(None, description="critical path on one device, the rest by HEFT")
    data_parallel_ms: float | None = Field(None, exclude_if=lambda v: v is None,
                                           description="split plans: every splittable op sample-split "
                                           "over all devices, gradients all-reduced")
    placement_only_ms: float | None = Field(None, exclude_if=lambda v: v is None,
                                            description="split plans: the best placement without splitting")


class SplitEntry(BaseModel):
    """How a split op is cut: a dimension of its output, the degree, one device per task."""

    model_config = ConfigDict(strict=True)

    dim: Identifier
    degree: int = Field(ge=2)
    devices: list[Identifier]


class CollectiveEntry(BaseModel):
    """A collective of a split plan: the ring all-reduce of a sample-split op's weight gradient."""

    model_config = ConfigDict(strict=True)

    kind: Literal["all_reduce"] = "all_reduce"
    src: Identifier = Field(description="the op whose output is reduced (a weight gradient)")
    dst: Identifier = Field(description="the op that waits for it (the update)")
    participants: list[Identifier]
    bytes: int
    routes: list[list[Identifier]] = Field(description="the route of each hop of the ring")
    start_ms: float
    end_ms: float


class SimulationSummary(BaseModel):
    """The event-driven replays of a result (placer.simulator), a check independent of the solver.

    `makespan_ms` replays the result's own per-device order and equals the result's makespan
    (the engine refuses an answer where it does not); `fifo_makespan_ms` lets each device run
    its ops first ready, first run; `contention_makespan_ms` keeps the order but lets each link
    direction carry one transfer at a time. `device_utilisation` and `link_busy_ms` come from
    the contended replay when `contention` is true (PlaceOptions.contention), else from the
    ordered one."""

    makespan_ms: float
    fifo_makespan_ms: float | None = None
    contention_makespan_ms: float | None = None
    contention: bool = Field(False, description="utilisation and link times below are under link contention")
    device_utilisation: dict[str, float] = Field(default_factory=dict, description="busy share of the makespan")
    link_bytes: dict[str, int] = Field(default_factory=dict, description='bytes per link direction "a->b"')
    link_busy_ms: dict[str, float] | None = Field(None, description="busy time per link direction")


class ResultSpec(BaseModel):
    """A placement answer (placer.result/v1). Unknown keys (from other tools) are kept."""

    model_config = ConfigDict(extra="allow", strict=True)

    format: Literal["placer.result/v1"] = RESULT_FORMAT
    status: Literal["optimal", "feasible", "infeasible", "no_solution"]
    solver: Kind
    makespan_ms: float | None = None
    lower_bound_ms: float | None = None
    gap: float | None = None
    single_device_ms: float | None = None
    speedup: float | None = None
    solve_time_s: float = 0.0
    placement: dict[Identifier, Identifier] = Field(default_factory=dict)
    schedule: list[ScheduleEntry] = Field(default_factory=list)
    transfers: list[TransferEntry] = Field(default_factory=list)
    memory_bytes: dict[Identifier, int] = Field(default_factory=dict)
    splits: dict[Identifier, SplitEntry] | None = Field(
        None, exclude_if=lambda v: v is None, description="split plans: the ops cut into tasks")
    collectives: list[CollectiveEntry] | None = Field(None, exclude_if=lambda v: v is None)
    reason: Text | None = None
    # how it was found (absent in results written by hand or by other tools)
    routing: Literal["shortest", "flow"] | None = Field(None, description="the routing option solved with")
    baselines: Baselines | None = None
    simulation: SimulationSummary | None = None
    stats: SolveStats | None = Field(None, description="how the solve went; keys of strategies that ran")
    stopped_by: Literal["deadline", "cancel", "worker_died"] | None = Field(
        None, description="a service job stopped from outside: its best placement until then")
    note: Text | None = None

    def with_bound(self, bound_ms: float | None) -> ResultSpec:
        """This result given a lower bound proven after it was made (a service job's later
        progress): the bound and gap the engine gives a makespan against that bound."""
        if bound_ms is None or self.makespan_ms is None or bound_ms <= (self.lower_bound_ms or 0.0):
            return self
        bound = min(bound_ms, self.makespan_ms)
        return self.model_copy(update={"lower_bound_ms": bound, "gap": relative_gap(self.makespan_ms, bound)})


def relative_gap(makespan_ms: float, bound_ms: float) -> float:
    """`gap` of a result: how far the makespan may be above the optimum, as a share of it.

    >>> relative_gap(10.0, 8.0)
    0.2
    """
    return (makespan_ms - bound_ms) / makespan_ms if makespan_ms > 0 else 0.0


# --------------------------------------------------------------------------- parsing


def _describe(raw: Any, loc: tuple[Any, ...]) -> str:
    """Turn a pydantic location into "ops[3] (op 'conv1').time_ms"."""
    parts: list[str] = []
    node = raw
    for item in loc:
        if isinstance(item, int):
            parts[-1:] = [f"{parts[-1] if parts else ''}[{item}]"]
            node = node[item] if isinstance(node, list) and 0 <= item < len(node) else None
            label = _label(node)
            if label:
                parts[-1] += f" ({label})"
        else:
            parts.append(str(item))
            node = node.get(item) if isinstance(node, dict) else None
    return ".".join(parts)


def _label(node: Any) -> str:
    if not isinstance(node, dict):
        return ""
    if "id" in node:
        return f"id {node['id']!r}"
    if "src" in node and "dst" in node:
        return f"edge {node['src']} -> {node['dst']}"
    if "a" in node and "b" in node:
        return f"link {node['a']} - {node['b']}"
    return ""


def error_message(err: Any) -> str:
    """pydantic's message for one error, said plainly where it would mislead (10**400 for a float
    field is "not a valid number" to pydantic: it is a number, too large)."""
    value = err.get("input")
    if err.get("type") == "float_type" and isinstance(value, int) and not isinstance(value, bool):
        return f"number {str(value)[:20]}... ({len(str(value))} digits) is too large"
    return str(err.get("msg", "invalid")).removeprefix("Value error, ")


def format_validation_error(exc: ValidationError, raw: Any, what: str) -> str:
    """One line per problem, each naming where in the document it is."""
    lines = []
    for err in exc.errors():
        where = _describe(raw, tuple(err["loc"]))
        msg = error_message(err)
        lines.append(f"{what}: {where}: {msg}" if where else f"{what}: {msg}")
    return "\n".join(lines)


def _parse(model: type[BaseModel], raw: Any, what: str, error: type[InputError]) -> Any:
    if not isinstance(raw, dict):
        raise error(f"{what}: expected a JSON object, got {type(raw).__name__}")
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        raise error(format_validation_error(exc, raw, what)) from None


def parse_graph(raw: Any) -> GraphSpec:
    """Validate a placer.graph/v1 document."""
    return _parse(GraphSpec, raw, "graph", InvalidGraphError)


def parse_hardware(raw: Any) -> HardwareSpec:
    """Validate a placer.hardware/v1 document."""
    return _parse(HardwareSpec, raw, "hardware", InvalidHardwareError)


def parse_result(raw: Any) -> ResultSpec:
    """Validate a placer.result/v1 document."""
    return _parse(ResultSpec, raw, "result", InputError)


def load_json(path: str | Path) -> Any:
    """Read a JSON file strictly (placer.jsondoc: no NaN, no repeated keys, no lone surrogates);
    a missing or broken file is an InputError naming it."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    return parse_json(data, str(path))
