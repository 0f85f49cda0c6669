"""POST /v1/placements: solve a placement, at once (200) or as a job (202)."""
from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from api.compute import run_compute, unvalidated, validate_body
from api.deps import JobsDep, SettingsDep
from api.inputs import (
    check_limits,
    check_placeable,
    check_sub_solves,
    check_threads,
    check_time_limit,
    resolve_hardware_ref,
)
from api.jobs import Job, JobManager, final_answer
from api.parsed import ParsedBodyRoute
from api.routes import error_responses
from api.schemas import JobAccepted, PlacementRequest
from api.settings import Settings
from api.store import JobRecord
from placer.engine import PlaceOptions
from placer.schema import HardwareSpec, ResultSpec

__all__ = ["router", "wait_for_job"]

router = APIRouter(prefix="/v1/placements", tags=["placements"], route_class=ParsedBodyRoute)

RawPlacementRequest = unvalidated(PlacementRequest)


async def wait_for_job(job: Job, request: Request, jobs: JobManager, poll_s: float = 0.5) -> JobRecord:
    """Wait for a synchronous job; if the client goes away, cancel it so it frees its worker."""
    future = asyncio.wrap_future(job.future)
    while True:
        done, _ = await asyncio.wait({future}, timeout=poll_s)
        if done:
            return future.result()
        if await request.is_disconnected():
            await run_in_threadpool(jobs.cancel, job.record.id, 0.0)
            return await future


def _prepare(raw: object, settings: Settings) -> tuple[PlacementRequest, HardwareSpec, PlaceOptions, dict[str, Any]]:
    """Validate the request and check it against the limits and itself; the work for a worker."""
    body = validate_body(PlacementRequest, raw)
    hardware = resolve_hardware_ref(body.hardware)
    check_limits(body.graph, hardware, settings)
    options = body.options.place_options(check_sub_solves(body.options.ray, body.options.workers, settings))
    check_time_limit(options.time_limit_s, settings)
    check_threads(options.threads, settings)
    check_placeable(body.graph, hardware)
    work = {"graph": body.graph.model_dump(mode="json"), "hardware": hardware.model_dump(mode="json"),
            "options": options.model_dump(mode="json")}
    return body, hardware, options, work


@router.post(
    "",
    response_model=ResultSpec,
    summary="Place a graph on a machine",
    responses={202: {"model": JobAccepted, "description": "the solve runs as a job: poll GET /v1/jobs/{id}"},
               **error_responses(400, 401, 404, 413, 415, 422, 500, 503)},
)
async def create_placement(raw: RawPlacementRequest, request: Request, settings: SettingsDep,
                           jobs: JobsDep) -> Any:
    """Answers `placer.result/v1` (200; `infeasible` and `no_solution` are 200 too), or 202 with a
    job when `options.async` is true, the graph has more than PLACER_ASYNC_OPS_THRESHOLD ops, or
    the time limit exceeds PLACER_SYNC_MAX_TIME_LIMIT_S. A solve that reaches its time limit (plus
    grace) is stopped from outside; the best validated placement found by then is returned as
    `feasible` with its gap."""
    body, hardware, options, work = await run_compute(request, _prepare, raw, settings)
    run_async = (body.options.async_ or len(body.graph.ops) > settings.async_ops_threshold
                 or options.time_limit_s > settings.sync_max_time_limit_s)
    summary = {"solver": options.solver, "time_limit_s": options.time_limit_s, "graph": body.graph.name,
               "ops": len(body.graph.ops), "edges": len(body.graph.edges), "hardware": hardware.name,
               "devices": len(hardware.devices), "deterministic": options.deterministic}
    job = jobs.submit("placement", work, summary, persistent=run_async)
    if run_async:
        href = f"/v1/jobs/{job.record.id}"
        return JSONResponse(JobAccepted(job_id=job.record.id, href=href).model_dump(), status_code=202,
                            headers={"Location": href})
    record = await wait_for_job(job, request, jobs)
    return JSONResponse(final_answer(record))
