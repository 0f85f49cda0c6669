"""The outermost layer of every request (plain ASGI, so it sees the raw body as it streams):
request id, API key, body size and JSON sanity, access log and request metrics.

Order: the API key is checked before any body is read, the body is bounded while it is read
(413 without buffering more than the limit), and JSON that Python would parse into NaN,
infinities or a recursion error is refused here with a sentence instead of a 500 later.
"""
from __future__ import annotations

import hmac
import json
import logging
import math
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from api.errors import error_body
from api.logs import request_id_var
from api.metrics import ServiceMetrics
from api.settings import Settings

__all__ = ["ServiceMiddleware", "json_depth"]

log = logging.getLogger("api.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_OPEN_PATHS = ("/healthz",)
_BODY_METHODS = ("POST", "PUT", "PATCH")


class _Reject(Exception):
    def __init__(self, status: int, detail: str, code: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.code, self.headers = status, detail, code, headers or {}


def json_depth(doc: Any, limit: int) -> int:
    """Nesting depth of a parsed JSON document, counting stops once past `limit`."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(doc, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
            stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return deepest


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is too large for a 64-bit float")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _check_json(body: bytes, max_depth: int) -> None:
    try:
        doc = json.loads(body, parse_float=_finite_float, parse_constant=_no_constant)
    except RecursionError:
        raise _Reject(400, f"request body: JSON nested deeper than {max_depth} levels", "json_too_deep") from None
    except json.JSONDecodeError as exc:
        raise _Reject(400, f"request body is not valid JSON: {exc.msg} at line {exc.lineno} column "
                      f"{exc.colno}", "invalid_json") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise _Reject(400, f"request body: {exc}", "invalid_json") from None
    if json_depth(doc, max_depth) > max_depth:
        raise _Reject(400, f"request body: JSON nested deeper than {max_depth} levels", "json_too_deep")


class ServiceMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings, metrics: ServiceMetrics) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        key = settings.api_key.get_secret_value() if settings.api_key else ""
        self._expected = f"Bearer {key}".encode() if key else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v for k, v in scope.get("headers", [])}
        given = headers.get("x-request-id", b"").decode("latin-1")
        request_id = given if _REQUEST_ID.match(given) else uuid.uuid4().hex
        token = request_id_var.set(request_id)
        began = time.perf_counter()
        status = {"code": 500}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                message["headers"] = [*message.get("headers", []), (b"x-request-id", request_id.encode())]
            await send(message)

        try:
            try:
                self._authorize(scope, headers)
                if scope["method"] in _BODY_METHODS:
                    receive = await self._bounded_body(receive, headers)
            except _Reject as rej:
                await _send_json(send_with_id, rej.status, error_body(rej.detail, rej.code), rej.headers)
                return
            await self.app(scope, receive, send_with_id)
        finally:
            route = scope.get("route")
            label = getattr(route, "path", None) or "other"
            elapsed = time.perf_counter() - began
            self.metrics.requests.inc(scope["method"], label, str(status["code"]))
            self.metrics.request_seconds.observe(elapsed, label)
            client = scope.get("client")
            log.info("request", extra={"method": scope["method"], "path": scope["path"], "route": label,
                                       "status": status["code"], "duration_ms": round(elapsed * 1e3, 2),
                                       "client": client[0] if client else None})
            request_id_var.reset(token)

    def _authorize(self, scope: Scope, headers: dict[str, bytes]) -> None:
        if self._expected is None or scope["path"] in _OPEN_PATHS:
            return
        if not hmac.compare_digest(headers.get("authorization", b""), self._expected):
            raise _Reject(401, "missing or wrong API key: send the header 'Authorization: Bearer <key>'",
                          "unauthorized", {"WWW-Authenticate": "Bearer"})

    async def _bounded_body(self, receive: Receive, headers: dict[str, bytes]) -> Receive:
        """Read the whole body (at most max_body_bytes), check it, and hand it on."""
        limit = self.settings.max_body_bytes
        too_large = _Reject(413, f"request body is larger than {limit} bytes (PLACER_MAX_BODY_BYTES)",
                            "body_too_large")
        declared = headers.get("content-length")
        if declared is not None:
            try:
                if int(declared) > limit:
                    raise too_large
            except ValueError:
                raise _Reject(400, "Content-Length is not a number", "bad_request") from None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                raise _Reject(400, "client disconnected while sending the body", "bad_request")
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                raise too_large
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        if body:
            ctype = headers.get("content-type", b"application/json").decode("latin-1").split(";")[0].strip()
            if ctype != "application/json" and not ctype.endswith("+json"):
                raise _Reject(415, f"Content-Type must be application/json, got {ctype!r} "
                              "(curl: -H 'Content-Type: application/json')", "unsupported_media_type")
            _check_json(body, self.settings.max_json_depth)
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        return replay


async def _send_json(send: Send, status: int, body: dict[str, Any], headers: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]
    raw += [(k.lower().encode(), v.encode()) for k, v in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": payload})
