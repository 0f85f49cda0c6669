"""GET /v1/jobs/{id}: state, progress, result. DELETE /v1/jobs/{id}: cancel."""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from fastapi import APIRouter, Path
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse

from api.compute import json_reply
from api.deps import JobsDep
from api.routes import error_responses
from api.schemas import JobView
from api.store import JobRecord

__all__ = ["router"]

router = APIRouter(prefix="/v1/jobs", tags=["jobs"])

JobId = Annotated[str, Path(min_length=1, max_length=64, pattern=r"^[0-9a-f]+$",
                            description="the job_id a 202 answer gave")]


def _view(rec: JobRecord) -> JobView:
    return JobView(id=rec.id, kind=rec.kind, state=rec.state, created_at=rec.created_at,  # type: ignore[arg-type]
                   started_at=rec.started_at, finished_at=rec.finished_at, interruptions=rec.interruptions,
                   worker=rec.worker, request=rec.summary, progress=rec.progress, result=rec.result, error=rec.error)


def _reply(lookup: Callable[[str], JobRecord], job_id: str) -> JSONResponse:
    """The job's view, built and rendered in a worker thread (a 5,000-op result takes ~0.1 s)."""
    return json_reply(JobView, _view(lookup(job_id)))


@router.get("/{job_id}", response_model=JobView, summary="A job's state, progress and result",
            responses=error_responses(401, 404, 422))
async def get_job(job_id: JobId, jobs: JobsDep) -> JSONResponse:
    return await run_in_threadpool(_reply, jobs.get, job_id)


@router.delete("/{job_id}", response_model=JobView, summary="Cancel a job",
               responses=error_responses(401, 404, 409, 422))
async def cancel_job(job_id: JobId, jobs: JobsDep) -> JSONResponse:
    """Cancels a queued or running job (its worker process group is killed). The answer shows the
    job as `cancelled`, with the best placement found before the cancel as its result, if any.
    Cancelling a cancelled job answers the same; a job that finished otherwise answers 409."""
    return await run_in_threadpool(_reply, jobs.cancel, job_id)
