"""POST /v1/simulations: replay a placement with the event-driven simulator."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api.compute import json_reply, run_compute, unvalidated, validate_body
from api.deps import SettingsDep
from api.inputs import check_limits, check_order, resolve_hardware_ref
from api.parsed import ParsedBodyRoute
from api.routes import error_responses
from api.schemas import SimulationReply, SimulationRequest
from api.settings import Settings
from placer.errors import InputError
from placer.replay import ReplayPlan, replay, replay_plan
from placer.validate import check_result

__all__ = ["router"]

router = APIRouter(prefix="/v1/simulations", tags=["simulations"], route_class=ParsedBodyRoute)

RawSimulationRequest = unvalidated(SimulationRequest)


def _simulate(raw: object, settings: Settings) -> JSONResponse:
    body = validate_body(SimulationRequest, raw)
    hardware = resolve_hardware_ref(body.hardware)
    check_limits(body.graph, hardware, settings)
    if body.result is not None and body.result.splits is not None:  # a split plan (docs/split.md)
        from placer.split.report import replay_split

        violations = check_result(body.graph, hardware, body.result)
        if violations:
            raise InputError("result: not a valid split plan of this graph: " + "; ".join(violations[:3]))
        report = replay_split(body.graph, hardware, body.result, contention=body.contention)
        return json_reply(SimulationReply, report.to_dict())
    if body.result is not None:
        known = {op.id for op in body.graph.ops}
        for i, entry in enumerate(body.result.schedule):  # not an "order" problem: the op does not exist
            if entry.op not in known:
                raise InputError(f"result.schedule[{i}]: unknown op {entry.op!r} (not an op of graph "
                                 f"{body.graph.name!r})")
        plan = replay_plan(body.result)  # the same order and routes as `placer simulate`
    else:
        assert body.placement is not None
        plan = ReplayPlan(body.placement, body.order)
    if plan.order is not None:
        check_order(body.graph, hardware, plan.placement, plan.order)
    return json_reply(SimulationReply, replay(body.graph, hardware, plan, contention=body.contention).to_dict())


@router.post("", response_model=SimulationReply, summary="Replay a placement",
             responses=error_responses(400, 401, 404, 413, 415, 422))
async def create_simulation(raw: RawSimulationRequest, request: Request, settings: SettingsDep) -> Any:
    """Replays the placement (ops run when their inputs have arrived; with `order`, in that order per
    device) and reports makespan, device and link busy times and the timeline. With `contention`
    a link direction carries one transfer at a time, which the solvers' model leaves out."""
    return await run_compute(request, _simulate, raw, settings)
