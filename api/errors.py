"""Errors of the service and the one table that maps every error class to an HTTP status.

Every error is in the one tree rooted at `placer.errors.PlacerError` (input, back end,
solution check, service); the service adds its own classes below `ServiceError` here (api.pool
and api.store raise them). Every answer to a failure has the body `{"detail": sentence,
"code": code}`, the code being the class's stable `code`.
"""
from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from placer.errors import (
    DuplicateKeyError,
    InputError,
    InvalidJsonError,
    InvalidTextError,
    PlacerError,
    ServiceError,
    SolutionCheckError,
    SolverError,
    SolverUnavailableError,
    UnknownModelError,
    UnknownPresetError,
    error_classes,
)
from placer.schema import error_message

__all__ = [
    "DeadlineExceededError",
    "JobConflictError",
    "JobNotFoundError",
    "LimitExceededError",
    "QueueFullError",
    "ServiceError",
    "ServiceStoppingError",
    "StoreLockedError",
    "StoreUnavailableError",
    "WorkerFailedError",
    "WorkerStartError",
    "error_body",
    "http_status",
    "install_error_handlers",
    "rebuild_worker_error",
]

log = logging.getLogger("api.errors")


class LimitExceededError(InputError):
    """The request is larger than this service accepts (ops, edges, devices, time limit)."""

    code = "limit_exceeded"


class QueueFullError(ServiceError):
    """Every worker is busy and the queue is full: try again after Retry-After seconds."""

    code = "queue_full"

    def __init__(self, message: str, retry_after_s: int) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class ServiceStoppingError(ServiceError):
    """The service is shutting down; a job it held is re-queued for the next start."""

    code = "service_stopping"


class StoreLockedError(ServiceError):
    """Another service process holds the job store."""

    code = "store_locked"


class WorkerStartError(ServiceError):
    """A worker process did not come up (import error, or too slow)."""

    code = "worker_start_failed"


class StoreUnavailableError(ServiceError):
    """The job store cannot be written (disk full, file gone, I/O error): jobs are refused
    until it can, synchronous solves still run. `transient` is False when retrying cannot help
    (the row itself is rejected, e.g. too big)."""

    code = "store_unavailable"

    def __init__(self, message: str, retry_after_s: int = 5, transient: bool = True) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s
        self.transient = transient


class JobNotFoundError(ServiceError):
    """No job with this id (never existed, or its result expired)."""

    code = "job_not_found"


class JobConflictError(ServiceError):
    """The job is in a state that does not allow the request (cancel a finished job)."""

    code = "job_conflict"


class WorkerFailedError(ServiceError):
    """A solve worker died or failed in a way that is not the request's fault."""

    code = "worker_failed"


class DeadlineExceededError(ServiceError):
    """A computation without incumbents (crossover) ran past its deadline and was killed."""

    code = "deadline_exceeded"


# The one table, over the whole tree: walk the exception's MRO, the first class listed wins.
_HTTP_STATUS: dict[type[BaseException], int] = {
    UnknownPresetError: 404,
    UnknownModelError: 404,
    DuplicateKeyError: 422,
    InvalidTextError: 422,
    InvalidJsonError: 400,
    LimitExceededError: 422,
    InputError: 422,
    SolutionCheckError: 500,
    SolverUnavailableError: 503,  # this service cannot run that back end: another may
    SolverError: 500,
    QueueFullError: 503,
    ServiceStoppingError: 503,
    StoreUnavailableError: 503,
    JobNotFoundError: 404,
    JobConflictError: 409,
    WorkerStartError: 503,
    StoreLockedError: 503,
    WorkerFailedError: 500,
    DeadlineExceededError: 504,
    ServiceError: 500,
    PlacerError: 500,
}


def http_status(exc: BaseException) -> int:
    """The HTTP status of an exception per the table; 500 for anything unknown."""
    return next((_HTTP_STATUS[c] for c in type(exc).__mro__ if c in _HTTP_STATUS), 500)


def error_body(detail: str, code: str, **extra: Any) -> dict[str, Any]:
    return {"detail": detail, "code": code, **extra}


def rebuild_worker_error(error: dict[str, Any]) -> Exception:
    """The exception a worker reported (`api.worker`), as an instance of the class with its
    code, so the table maps it like a local one and the answer keeps the code."""
    detail = str(error.get("detail", "the solve failed"))
    cls = error_classes().get(str(error.get("code", "")))
    if cls is not None and cls.__name__ == error.get("type", cls.__name__):
        try:
            return cls(detail)
        except TypeError:  # a class that needs more than a message (QueueFullError)
            pass
    if error.get("input"):
        return InputError(detail)
    return WorkerFailedError(f"the solve failed in its worker: {detail}")


def _strip_union_tag(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """Drop the tags a callable discriminator adds to locations ("hardware.inline.devices")."""
    return tuple(x for x in loc if x not in ("inline", "preset"))


def _where(body: Any, loc: tuple[Any, ...]) -> str:
    """A pydantic location as "graph.ops[3] (id 'conv1').time_ms", naming the object it is in."""
    parts: list[str] = []
    node = body
    for item in loc:
        if isinstance(item, int):
            label = f"[{item}]"
            node = node[item] if isinstance(node, list) and 0 <= item < len(node) else None
            if isinstance(node, dict):
                if "id" in node:
                    label += f" (id {str(node['id'])[:80]!r})"
                elif "src" in node and "dst" in node:
                    label += f" (edge {str(node['src'])[:80]} -> {str(node['dst'])[:80]})"
                elif "a" in node and "b" in node:
                    label += f" (link {str(node['a'])[:80]} - {str(node['b'])[:80]})"
            if parts:
                parts[-1] += label
            else:
                parts.append(label)
        else:
            parts.append(str(item)[:80])
            node = node.get(item) if isinstance(node, dict) else None
    return ".".join(parts)


def validation_detail(errors: list[dict[str, Any]], body: Any) -> str:
    """One line per problem ("where: what"), at most 20 lines."""
    lines = []
    for err in errors[:20]:
        loc = _strip_union_tag(tuple(err.get("loc", ())))
        if loc and loc[0] == "body":
            where = _where(body, loc[1:]) or "request body"
        elif loc and loc[0] in ("query", "path", "header"):
            where = f"{loc[0]} parameter {'.'.join(map(str, loc[1:]))}"
        else:
            where = _where(body, loc)
        msg = error_message(err)
        lines.append(f"{where}: {msg}" if where else msg)
    if len(errors) > 20:
        lines.append(f"... and {len(errors) - 20} more problems")
    return "\n".join(lines)


async def _placer_error(request: Request, exc: Exception) -> JSONResponse:
    status = http_status(exc)
    if status >= 500:
        log.error("request failed", exc_info=exc, extra={"code": getattr(exc, "code", "internal")})
    headers = {}
    if isinstance(exc, (QueueFullError, StoreUnavailableError)):
        headers["Retry-After"] = str(exc.retry_after_s)
    return JSONResponse(error_body(str(exc), getattr(exc, "code", "internal")), status_code=status,
                        headers=headers)


async def _validation_error(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = [dict(e) for e in exc.errors()]
    compact = [{"loc": list(_strip_union_tag(tuple(e.get("loc", ())))), "msg": e.get("msg"),
                "type": e.get("type")} for e in errors[:50]]
    return JSONResponse(error_body(validation_detail(errors, exc.body), "invalid_request", errors=compact),
                        status_code=422)


async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    codes = {404: "not_found", 405: "method_not_allowed", 401: "unauthorized", 413: "body_too_large"}
    return JSONResponse(error_body(str(exc.detail), codes.get(exc.status_code, "http_error")),
                        status_code=exc.status_code, headers=getattr(exc, "headers", None))


async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
    log.error("unexpected error", exc_info=exc)
    return JSONResponse(error_body("internal error; the request id in the X-Request-ID header finds it in "
                                   "the logs", "internal"), status_code=500)


def install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(PlacerError, _placer_error)
    app.add_exception_handler(RequestValidationError, _validation_error)  # type: ignore[arg-type]
    app.add_exception_handler(StarletteHTTPException, _http_error)  # type: ignore[arg-type]
    app.add_exception_handler(Exception, _unexpected)
