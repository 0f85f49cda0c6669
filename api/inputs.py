"""Checks of request documents beyond their schemas: presets by name, the service's size
limits, and contradictions between a graph and a machine, each naming what is wrong."""
from __future__ import annotations

from collections.abc import Mapping, Sequence

from api.errors import LimitExceededError
from api.settings import Settings
from placer.errors import InputError, InvalidGraphError
from placer.feasibility import explain_infeasible
from placer.model import Problem, build_problem
from placer.resolve import load_preset
from placer.schema import GraphSpec, HardwareSpec

__all__ = [
    "ContradictoryInputError",
    "check_limits",
    "check_order",
    "check_placeable",
    "check_sub_solves",
    "check_threads",
    "check_time_limit",
    "resolve_hardware_ref",
]


class ContradictoryInputError(InvalidGraphError):
    """No placement can exist, and the input alone shows why (an op larger than every device
    it may use, pins beyond a device's memory, more memory than the machine has)."""

    code = "contradictory_input"


def resolve_hardware_ref(ref: HardwareSpec | str) -> HardwareSpec:
    """An inline document as is, or a preset by name. Never a file: this is a network service."""
    if isinstance(ref, HardwareSpec):
        return ref
    return load_preset(ref)


def check_limits(graph: GraphSpec, hardware: HardwareSpec, settings: Settings) -> None:
    """Refuse problems above the configured sizes (PLACER_MAX_OPS, _EDGES, _DEVICES)."""
    for where, count, limit, env in (
        ("graph.ops", len(graph.ops), settings.max_ops, "PLACER_MAX_OPS"),
        ("graph.edges", len(graph.edges), settings.max_edges, "PLACER_MAX_EDGES"),
        ("hardware.devices", len(hardware.devices), settings.max_devices, "PLACER_MAX_DEVICES"),
    ):
        if count > limit:
            raise LimitExceededError(f"{where}: {count} given, this service accepts at most {limit} ({env})")


def check_time_limit(time_limit_s: float, settings: Settings, where: str = "options.time_limit_s") -> None:
    if time_limit_s > settings.max_time_limit_s:
        raise LimitExceededError(
            f"{where}: {time_limit_s:g} s exceeds this service's maximum of {settings.max_time_limit_s:g} s "
            "(PLACER_MAX_TIME_LIMIT_S)"
        )


def check_threads(threads: int, settings: Settings, where: str = "options.threads") -> None:
    if threads > settings.max_threads:
        raise LimitExceededError(f"{where}: {threads} exceeds this service's maximum of {settings.max_threads} "
                                 "(PLACER_MAX_THREADS)")


def check_sub_solves(ray: bool, workers: int, settings: Settings) -> str | None:
    """The Ray address a solve's sub-solves go to (None: they run in its worker process):
    `options.ray` needs a service on a Ray cluster, and more than one worker needs `ray` (a
    worker process may not start processes of its own beside the pool's)."""
    if ray and settings.executor != "ray":
        raise InputError("options.ray: this service runs solves on this machine (PLACER_EXECUTOR=local), "
                         "not on a Ray cluster; leave it out")
    if workers > 1 and not ray:
        raise InputError(f"options.workers: {workers} sub-solves at once need options.ray (the service runs "
                         "each solve in one worker process)")
    return settings.ray_address if ray else None


def check_placeable(graph: GraphSpec, hardware: HardwareSpec) -> Problem:
    """Build the problem (pins to unknown devices, costs the machine cannot compute fail here)
    and refuse inputs that contradict themselves before any worker is spent on them."""
    problem = build_problem(graph, hardware)
    reason = explain_infeasible(problem)
    if reason is not None:
        raise ContradictoryInputError(f"no placement can exist: {reason}")
    return problem


def check_order(graph: GraphSpec, hardware: HardwareSpec, placement: Mapping[str, str],
                order: Mapping[str, Sequence[str]]) -> None:
    """A per-device run order must list each op once, on the device it is placed on."""
    devices = {d.id for d in hardware.devices}
    ops = {op.id for op in graph.ops}
    seen: dict[str, str] = {}
    for device, listed in order.items():
        if device not in devices:
            raise InputError(f"order: {device!r} is not a device of hardware {hardware.name!r}")
        for i, op in enumerate(listed):
            if op not in ops:
                raise InputError(f"order.{device}[{i}]: unknown op {op!r}")
            if op in seen:
                raise InputError(f"order.{device}[{i}]: op {op!r} is listed twice (also on {seen[op]!r})")
            if placement.get(op) != device:
                raise InputError(f"order.{device}[{i}]: op {op!r} is placed on {placement.get(op)!r}, "
                                 f"not {device!r}")
            seen[op] = device
    missing = sorted(ops - set(seen))
    if missing:
        raise InputError(f"order: ops {', '.join(map(repr, missing[:10]))} are in no device's order")
