"""SU^M from the placement engine: place one training step on M devices of a machine.

The machine is the configured hardware restricted to M devices (the first M, or an
explicit list), every switch, and the links among what is kept. SU^M is the engine's
`speedup` (best one-device time over the M-device makespan), so it already includes the
cost of moving tensors between the M devices, as the paper's SU^M does.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import networkx as nx
from pydantic import ValidationError

from placer.crossover.config import EngineSpec
from placer.errors import InputError, InvalidHardwareError
from placer.schema import GraphSpec, HardwareSpec, load_json, parse_graph

__all__ = [
    "EngineSpeedup",
    "engine_speedups",
    "load_engine_graph",
    "load_engine_hardware",
    "restrict_hardware",
]

FIELD = "mp_speedup.engine"


@dataclass(frozen=True, slots=True)
class EngineSpeedup:
    """One engine answer: SU^M and how it was obtained."""

    m: int
    speedup: float
    devices: tuple[str, ...]
    status: str
    solver: str
    makespan_ms: float
    single_device_ms: float
    gap: float | None
    solve_time_s: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": "engine",
            "speedup": self.speedup,
            "devices": list(self.devices),
            "status": self.status,
            "solver": self.solver,
            "makespan_ms": self.makespan_ms,
            "single_device_ms": self.single_device_ms,
            "gap": self.gap,
            "solve_time_s": self.solve_time_s,
        }


def restrict_hardware(hardware: HardwareSpec, m: int, device_ids: list[str] | None = None) -> HardwareSpec:
    """The machine cut down to M devices: those devices, all switches, links among kept nodes.

    Raises InvalidHardwareError when the hardware has fewer than M devices, names an unknown
    device, or when the kept devices cannot all reach each other without a dropped device.

    >>> from placer.schema import parse_hardware
    >>> hw = parse_hardware({"devices": [{"id": "g0"}, {"id": "g1"}, {"id": "g2"}],
    ...     "switches": [{"id": "sw"}],
    ...     "links": [{"a": "g0", "b": "sw", "bandwidth_gb_per_s": 10},
    ...               {"a": "g1", "b": "sw", "bandwidth_gb_per_s": 10},
    ...               {"a": "g1", "b": "g2", "bandwidth_gb_per_s": 50}]})
    >>> small = restrict_hardware(hw, 2)
    >>> [d.id for d in small.devices], [(l.a, l.b) for l in small.links]
    (['g0', 'g1'], [('g0', 'sw'), ('g1', 'sw')])
    >>> restrict_hardware(hw, 2, ["g0", "g2"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    placer.errors.InvalidHardwareError: mp_speedup.engine: ... disconnected: g2 cannot reach g0 ...
    """
    by_id = {d.id: d for d in hardware.devices}
    if device_ids is None:
        if m > len(hardware.devices):
            raise InvalidHardwareError(
                f"{FIELD}.m: M={m} but hardware {hardware.name!r} has only {len(hardware.devices)} devices"
            )
        kept = [d.id for d in hardware.devices[:m]]
    else:
        unknown = [i for i in device_ids if i not in by_id]
        if unknown:
            raise InvalidHardwareError(
                f"{FIELD}.device_ids.{m}: hardware {hardware.name!r} has no device {unknown[0]!r}"
            )
        kept = list(device_ids)
    nodes = set(kept) | {s.id for s in hardware.switches}
    links = [link for link in hardware.links if link.a in nodes and link.b in nodes]
    graph = nx.Graph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((link.a, link.b) for link in links)
    reach = nx.node_connected_component(graph, kept[0])
    cut_off = [d for d in kept if d not in reach]
    if cut_off:
        raise InvalidHardwareError(
            f"{FIELD}: hardware {hardware.name!r} restricted to devices {kept} is disconnected: "
            f"{', '.join(cut_off)} cannot reach {kept[0]} without a dropped device"
        )
    return hardware.model_copy(
        update={
            "name": f"{hardware.name}[{m} devices]",
            "devices": [by_id[i] for i in kept],
            "links": links,
        }
    )


def _local(ref: str, base_dir: Path | None) -> Path | None:
    """`ref` as a file, relative to the config's directory first."""
    candidates = [Path(ref)] if Path(ref).is_absolute() else []
    if not candidates:
        if base_dir is not None:
            candidates.append(base_dir / ref)
        candidates.append(Path(ref))
    return next((p for p in candidates if p.is_file()), None)


def _reraise(exc: InputError, where: str) -> InputError:
    """The same error, its message prefixed with the config field it came from."""
    return type(exc)(f"{FIELD}.{where}: {exc}")


def load_engine_graph(spec: EngineSpec, base_dir: Path | None = None, allow_files: bool = True) -> GraphSpec:
    """The dataflow graph: an inline document, a file (relative to the config), or a zoo model.

    `allow_files=False` (a service taking configs from the network) refuses file paths.
    """
    try:
        if spec.model is not None:
            from placer import zoo  # imported here: the zoo builds models on demand

            try:
                built = zoo.build(spec.model, spec.batch) if spec.batch is not None else zoo.build(spec.model)
            except KeyError:
                raise InputError(f"no zoo model {spec.model!r}") from None
            return built if isinstance(built, GraphSpec) else parse_graph(built)
        if isinstance(spec.graph, dict):
            return parse_graph(spec.graph)
        assert spec.graph is not None
        if not allow_files:
            raise InputError("file paths are not accepted here; give the placer.graph/v1 document inline")
        path = _local(spec.graph, base_dir)
        if path is None:
            raise InputError(f"no such file {spec.graph!r}")
        return parse_graph(load_json(path))
    except InputError as exc:
        raise _reraise(exc, "model" if spec.model is not None else "graph") from None


def load_engine_hardware(
    spec: EngineSpec, base_dir: Path | None = None, allow_files: bool = True
) -> HardwareSpec:
    """The machine: an inline document, a file (relative to the config), or a preset name."""
    import hardware_graphs
    from placer.resolve import resolve_hardware

    ref: str | dict[str, Any] = spec.hardware
    try:
        if isinstance(ref, str):
            if not allow_files:
                if ref not in hardware_graphs.preset_names():
                    known = ", ".join(hardware_graphs.preset_names())
                    raise InputError(
                        f"{ref!r} is not a preset (presets: {known}); file paths are not accepted here"
                    )
            else:
                path = _local(ref, base_dir)
                ref = str(path) if path is not None else ref
        return resolve_hardware(ref)
    except InputError as exc:
        raise _reraise(exc, "hardware") from None


def engine_speedups(
    spec: EngineSpec,
    base_dir: Path | None = None,
    progress: Callable[[str], None] | None = None,
    allow_files: bool = True,
) -> dict[int, EngineSpeedup]:
    """SU^M for every M in `spec.m`, each from one engine solve on the restricted machine."""
    from placer.engine import PlaceOptions, place  # the engine pulls in the solver back ends

    try:
        options = PlaceOptions(solver=spec.solver, time_limit_s=spec.time_limit_s, split=spec.split)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "options"
        raise InputError(f"{FIELD}.{where}: {first['msg']}") from None
    graph = load_engine_graph(spec, base_dir, allow_files)
    hardware = load_engine_hardware(spec, base_dir, allow_files)
    machines = {
        m: restrict_hardware(hardware, m, spec.device_ids.get(m)) for m in spec.m
    }  # fail before solving
    answers: dict[int, EngineSpeedup] = {}
    for m, machine in machines.items():
        if progress is not None:
            progress(f"placing {graph.name!r} on {m} devices of {hardware.name!r} with {spec.solver}")
        result = place(graph, machine, options)
        if result.status not in ("optimal", "feasible"):
            why = f": {result.reason}" if result.reason else ""
            raise InputError(
                f"{FIELD}: M={m}: the engine found no usable placement of {graph.name!r} on "
                f"{[d.id for d in machine.devices]} (status {result.status}{why})"
            )
        if not result.speedup or not math.isfinite(result.speedup):
            raise InputError(
                f"{FIELD}: M={m}: {graph.name!r} does not fit on one device of {hardware.name!r}, so "
                "SU^M (relative to one device) is undefined; give mp_speedup.given instead"
            )
        answers[m] = EngineSpeedup(
            m=m,
            speedup=float(result.speedup),
            devices=tuple(d.id for d in machine.devices),
            status=result.status,
            solver=result.solver,
            makespan_ms=float(result.makespan_ms or 0.0),
            single_device_ms=float(result.single_device_ms or 0.0),
            gap=result.gap,
            solve_time_s=float(result.solve_time_s),
        )
    return answers
