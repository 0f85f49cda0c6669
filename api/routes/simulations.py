"""POST /v1/simulations: replay a placement with the event-driven simulator."""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool

from api.deps import SettingsDep
from api.inputs import check_limits, check_order, resolve_hardware_ref
from api.routes import error_responses
from api.schemas import SimulationReply, SimulationRequest
from api.settings import Settings
from placer.errors import InputError
from placer.simulator import simulate

__all__ = ["router"]

router = APIRouter(prefix="/v1/simulations", tags=["simulations"])


def _simulate(body: SimulationRequest, settings: Settings) -> dict[str, Any]:
    hardware = resolve_hardware_ref(body.hardware)
    check_limits(body.graph, hardware, settings)
    order = body.order
    if body.result is not None:
        if body.result.status not in ("optimal", "feasible"):
            raise InputError(f"result: status {body.result.status!r} carries no placement to replay")
        placement = body.result.placement
        by_device: dict[str, list[tuple[float, float, str]]] = defaultdict(list)
        for entry in body.result.schedule:
            by_device[entry.device].append((entry.start_ms, entry.end_ms, entry.op))
        order = {d: [op for *_, op in sorted(entries)] for d, entries in by_device.items()} or None
    else:
        assert body.placement is not None
        placement = body.placement
    if order is not None:
        check_order(body.graph, hardware, placement, order)
    return simulate(body.graph, hardware, placement, order=order, contention=body.contention).to_dict()


@router.post("", response_model=SimulationReply, summary="Replay a placement",
             responses=error_responses(400, 401, 404, 413, 415, 422))
async def create_simulation(body: SimulationRequest, settings: SettingsDep) -> Any:
    """Replays the placement (ops run when their inputs have arrived; with `order`, in that order per
    device) and reports makespan, device and link busy times and the timeline. With `contention`
    a link direction carries one transfer at a time, which the solvers' model leaves out."""
    return await run_in_threadpool(_simulate, body, settings)
