"""CPU-heavy request work runs off the event loop, a few requests at a time.

Validating a 5,000-op graph takes about a second and a simulation several: on the event loop
either stalls every other request, /healthz included. So request bodies are declared with
their schema (OpenAPI shows it as before) but arrive unvalidated, and the validation and every
other heavy step of a request run through `run_compute`: in a worker thread, at most
PLACER_COMPUTE_THREADS at once (the rest wait their turn without blocking the loop). Solves
run in the worker processes, not here.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from fastapi import Body, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, PlainValidator, ValidationError

__all__ = ["compute_limiter", "json_reply", "run_compute", "unvalidated", "validate_body"]

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)


def _as_is(value: Any) -> Any:
    return value


def unvalidated(model: type[BaseModel], **body: Any) -> Any:
    """A request body that OpenAPI documents as `model` but that FastAPI hands over as parsed JSON
    (`validate_body` checks it later, in a worker thread). `body`: arguments of fastapi.Body."""
    return Annotated[Any, PlainValidator(_as_is, json_schema_input_type=model), Body(**body)]


def validate_body(model: type[M], raw: Any) -> M:
    """`model` from the parsed body; errors answer 422 exactly as FastAPI's own validation does."""
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        errors = [{**e, "loc": ("body", *e["loc"])} for e in exc.errors(include_url=False)]
        raise RequestValidationError(errors, body=raw) from None


def json_reply(model: type[BaseModel], value: Any) -> JSONResponse:
    """`value` checked and rendered as FastAPI's `response_model=model` would, but where this is
    called (a worker thread) rather than on the event loop: big replies take a while to render."""
    return JSONResponse(model.model_validate(value).model_dump(mode="json", by_alias=True))


def compute_limiter(threads: int) -> CapacityLimiter:
    return CapacityLimiter(threads)


async def run_compute(request: Request, fn: Callable[..., T], *args: Any) -> T:
    """fn(*args) in a worker thread, within the app's compute limiter (PLACER_COMPUTE_THREADS)."""
    return await anyio.to_thread.run_sync(fn, *args, limiter=request.app.state.compute_limiter)
