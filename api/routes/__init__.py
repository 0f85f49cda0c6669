"""One router per resource."""
from __future__ import annotations

from typing import Any

from api.schemas import ErrorReply

__all__ = ["error_responses"]


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI entries for the error answers a route can give (all share ErrorReply)."""
    text = {400: "malformed JSON or nesting too deep", 401: "missing or wrong API key",
            404: "unknown preset, model or job", 409: "the job is already finished",
            413: "request body too large", 415: "body is not JSON",
            422: "invalid or contradictory input; `detail` names the field and the op/edge/device",
            500: "internal error (a bug: see the logs by X-Request-ID)",
            503: "all workers busy and the queue full (see Retry-After), or shutting down",
            504: "a computation ran past its deadline"}
    return {code: {"model": ErrorReply, "description": text[code]} for code in codes}
