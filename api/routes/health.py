"""GET /healthz (liveness, back ends, queue) and GET /metrics (Prometheus)."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

import placer
from api.deps import JobsDep, MetricsDep, SettingsDep
from api.metrics import CONTENT_TYPE
from api.routes import error_responses
from api.schemas import Health

__all__ = ["router"]

router = APIRouter(tags=["service"])


@router.get("/healthz", response_model=Health, summary="Liveness, solver back ends, queue depth",
            responses={503: {"model": Health, "description": "`failing`: `problems` names what is wrong"}})
async def healthz(request: Request, settings: SettingsDep, jobs: JobsDep) -> Any:
    """Never needs the API key. Runs on the event loop (it only reads counters under short
    locks), so it answers while request work holds the worker threads. 503 `failing` while something keeps the service from its job (the
    job store cannot be written, its file was deleted or replaced), ok again once the cause is gone.
    `degraded` when no solve worker is up; `workers_alive` below `workers` for a moment is normal
    after a solve was killed (its worker is being restarted)."""
    alive = jobs.workers_alive()
    problems = jobs.problems()
    health = Health(status="failing" if problems else "ok" if alive > 0 else "degraded", problems=problems,
                    version=placer.__version__, solvers=request.app.state.solvers, workers=settings.workers,
                    workers_alive=alive, running=jobs.running(), queue_depth=jobs.queue_depth(),
                    queue_size=settings.queue_size, cluster=jobs.cluster().public())
    return JSONResponse(health.model_dump(), status_code=503 if problems else 200)


@router.get("/metrics", response_class=PlainTextResponse, summary="Prometheus metrics",
            responses={200: {"content": {"text/plain": {"example": "placer_queue_depth 0\n"}}}, **error_responses(401)})
def metrics(registry: MetricsDep) -> Response:
    return Response(registry.render(), media_type=CONTENT_TYPE)
