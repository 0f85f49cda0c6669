"""A plan to run: which device each op runs on and how split ops are cut (torch-free).

Reads what `placer solve` writes (placer.result/v1), `{"placement": ..., "splits": ...}` or a
bare `{op: device}` map. Splits follow DESIGN.md's result format:
`splits: {op: {"dim": "sample" | "channel" | ..., "degree": d, "devices": [...]}}`. This module
checks only that the document is well formed; whether a plan is valid for its graph and
hardware is the validator's job.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from placer.errors import InputError
from placer.replay import parse_placement_document
from placer.schema import RESULT_FORMAT

__all__ = ["ExportPlan", "Split", "device_map", "read_plan"]


@dataclass(frozen=True)
class Split:
    """An op cut into `degree` tasks along `dim`, task k on `devices[k]`."""

    dim: str
    degree: int
    devices: tuple[str, ...]


@dataclass(frozen=True)
class ExportPlan:
    """Op -> device, op -> split, the plan's devices in order, and its predicted step time."""

    placement: dict[str, str]
    splits: dict[str, Split]
    devices: tuple[str, ...]
    makespan_ms: float | None = None
    simulated_ms: float | None = None

    @property
    def training(self) -> bool:
        """True when the plan places backward ops (a training step)."""
        return any(op.endswith(".bwd") for op in self.placement)


def _split(op: str, raw: Any, what: str) -> Split:
    where = f"{what}: splits.{op}"
    if not isinstance(raw, dict):
        raise InputError(f"{where}: expected an object with dim, degree and devices")
    dim, degree, devices = raw.get("dim"), raw.get("degree"), raw.get("devices")
    if not isinstance(dim, str) or not dim:
        raise InputError(f"{where}.dim: expected a dimension name such as 'sample' or 'channel'")
    if not isinstance(degree, int) or isinstance(degree, bool) or degree < 1:
        raise InputError(f"{where}.degree: expected a positive integer, got {degree!r}")
    if not isinstance(devices, list) or not all(isinstance(d, str) and d for d in devices):
        raise InputError(f"{where}.devices: expected a list of device ids")
    if len(devices) != degree:
        raise InputError(f"{where}.devices: {len(devices)} devices for degree {degree}")
    return Split(dim=dim, degree=degree, devices=tuple(devices))


def read_plan(raw: Any, what: str = "plan") -> ExportPlan:
    """The plan in a result document, a `{"placement": ...}` document or a bare map."""
    if isinstance(raw, dict) and raw.get("format") == RESULT_FORMAT and raw.get("status") in (
            "infeasible", "no_solution"):
        raise InputError(f"{what}: the result is {raw['status']}: it has no plan to export")
    plain = isinstance(raw, dict) and "splits" in raw and raw.get("format") != RESULT_FORMAT
    bare = {k: v for k, v in raw.items() if k != "splits"} if plain else raw
    placement = dict(parse_placement_document(bare, what).placement)
    raw_splits = raw.get("splits") or {} if isinstance(raw, dict) else {}
    if not isinstance(raw_splits, dict):
        raise InputError(f"{what}: splits: expected an object {{op: {{dim, degree, devices}}}}")
    splits = {op: _split(op, spec, what) for op, spec in raw_splits.items()}
    for op, split in splits.items():
        placement.setdefault(op, split.devices[0])
    if not placement:
        raise InputError(f"{what}: the plan places no op")
    devices: list[str] = []
    for device in list(placement.values()) + [d for s in splits.values() for d in s.devices]:
        if device not in devices:
            devices.append(device)
    makespan = raw.get("makespan_ms") if isinstance(raw, dict) else None
    simulation = raw.get("simulation") if isinstance(raw, dict) else None
    simulated = None
    if isinstance(simulation, dict):  # the replay with link contention, else the plain replay
        simulated = simulation.get("contention_makespan_ms") or simulation.get("makespan_ms")
    return ExportPlan(
        placement=placement, splits=splits, devices=tuple(devices),
        makespan_ms=float(makespan) if isinstance(makespan, (int, float)) else None,
        simulated_ms=float(simulated) if isinstance(simulated, (int, float)) else None,
    )


def device_map(plan_devices: tuple[str, ...], devices: dict[str, str] | None) -> dict[str, str]:
    """Plan device id -> torch device string; every plan device to 'cpu' by default.

    A map must name every device of the plan and nothing else: an unknown id is a typo that
    would otherwise run that device's ops somewhere the user did not mean.
    """
    if devices is None:
        return {d: "cpu" for d in plan_devices}
    if not isinstance(devices, dict) or not all(isinstance(k, str) and isinstance(v, str)
                                                for k, v in devices.items()):
        raise InputError("devices: expected a map {plan device id: torch device}, e.g. {\"gpu0\": \"cuda:0\"}")
    unknown = sorted(set(devices) - set(plan_devices))
    if unknown:
        raise InputError(f"devices: {', '.join(map(repr, unknown))} not in the plan; "
                         f"its devices are {', '.join(map(repr, plan_devices))}")
    missing = [d for d in plan_devices if d not in devices]
    if missing:
        raise InputError(f"devices: no torch device for plan device(s) {', '.join(map(repr, missing))}")
    return dict(devices)
