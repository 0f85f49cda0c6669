"""What to replay: a placement with, when known, its per-device order and transfer routes.

A result's order and routes are derived here only, so `placer solve --trace`, `placer simulate`
and POST /v1/simulations replay the same thing (a `--routing flow` answer keeps the routes its
solver chose, which are not always the shortest ones the simulator would pick by itself).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from placer.errors import InputError
from placer.schema import (
    RESULT_FORMAT,
    GraphSpec,
    HardwareSpec,
    ResultSpec,
    format_validation_error,
    parse_result,
)
from placer.simulator import SimulationReport, simulate

__all__ = ["ReplayPlan", "parse_placement_document", "replay", "replay_plan"]



class _PlacementDocument(BaseModel):
    """The placement fields of POST /v1/simulations, as a file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    placement: dict[str, str]
    order: dict[str, list[str]] | None = None


@dataclass(frozen=True)
class ReplayPlan:
    """op -> device; device -> its ops in run order (None: first ready, first run);
    (src op, dst op) -> the route of that edge's transfer (missing: the shortest route)."""

    placement: dict[str, str]
    order: dict[str, list[str]] | None = None
    routes: dict[tuple[str, str], list[str]] = field(default_factory=dict)


def replay_plan(result: ResultSpec, fifo: bool = False) -> ReplayPlan:
    """The placement, per-device order and routes `result` ran with.

    The order is the schedule's, by start then end time, ties kept in the listed order:
    a zero-length op that starts with a longer one runs first, as it did in the schedule.
    With `fifo` the order is dropped (each device runs its ops first ready, first run).
    """
    if result.status not in ("optimal", "feasible") or not result.placement:
        raise InputError(f"result: status {result.status!r} carries no placement to replay")
    order: dict[str, list[str]] | None = None
    if not fifo and result.schedule:
        order = {}
        for entry in sorted(result.schedule, key=lambda e: (e.start_ms, e.end_ms)):
            order.setdefault(entry.device, []).append(entry.op)
    routes = {(t.src, t.dst): list(t.route) for t in result.transfers}
    return ReplayPlan(dict(result.placement), order, routes)


def replay(graph: GraphSpec, hardware: HardwareSpec, plan: ReplayPlan, contention: bool = False) -> SimulationReport:
    """Simulate `plan` (see placer.simulator)."""
    return simulate(graph, hardware, plan.placement, plan.order, contention=contention, routes=plan.routes)


def parse_placement_document(raw: Any, what: str = "placement") -> ReplayPlan:
    """A placement to replay, in any of the three forms people write:

    - a placer.result/v1 document (its placement, order and routes);
    - ``{"placement": {op: device}, "order": {device: [op, ...]}}`` (order optional),
      the fields of POST /v1/simulations;
    - a bare map ``{op: device}``.

    >>> parse_placement_document({"a": "gpu0"}).placement
    {'a': 'gpu0'}
    >>> parse_placement_document({"placement": {"a": "gpu0"}}).order is None
    True
    """
    if not isinstance(raw, dict):
        raise InputError(f"{what}: expected a JSON object, got {type(raw).__name__}")
    if raw.get("format") == RESULT_FORMAT or "status" in raw or "solver" in raw:
        return replay_plan(parse_result(raw))
    if isinstance(raw.get("placement"), dict):
        try:
            doc = _PlacementDocument.model_validate(raw)
        except ValidationError as exc:
            raise InputError(format_validation_error(exc, raw, what)) from None
        return ReplayPlan(doc.placement, doc.order)
    if raw and all(isinstance(v, str) for v in raw.values()):
        return ReplayPlan(dict(raw))
    raise InputError(f"{what}: expected a placer.result/v1 document, {{\"placement\": {{op: device}}}} "
                     "or a bare map {op: device}")
