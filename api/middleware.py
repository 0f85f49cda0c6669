"""The outermost layer of every request (plain ASGI, so it sees the raw body as it streams):
request id, Host check, API key, body size and JSON sanity, access log and request metrics.

Order: the Host header is checked first (a page whose name was re-pointed at 127.0.0.1 by DNS
rebinding sends its own name: 421), then the API key, before any body is read; the body is
bounded while it is read (413 without buffering more than the limit), and JSON that Python
would read wrongly (NaN, overflowing numbers, repeated keys, lone surrogates, deep nesting) is
refused here by `placer.jsondoc` with a sentence instead of a 500 later.
"""
from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import anyio.to_thread

from api.errors import error_body, http_status
from api.logs import request_id_var
from api.metrics import ServiceMetrics
from api.parsed import PARSED_JSON
from api.ratelimit import FailureLimiter
from api.settings import Settings
from api.sizes import oversized
from placer.errors import InvalidJsonError
from placer.jsondoc import parse_json

__all__ = ["ServiceMiddleware", "allowed_hosts", "host_allowed"]

log = logging.getLogger("api.access")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# no data behind these: the docs page, its assets and the schema open in a browser without the key
_OPEN_PATHS = ("/healthz", "/docs", "/openapi.json")
_OPEN_PREFIXES = ("/static/swagger-ui/",)
_LOOPBACK_NAMES = ("localhost", "127.0.0.1", "::1")
_WILDCARD_BINDS = ("", "0.0.0.0", "::")
_BODY_METHODS = ("POST", "PUT", "PATCH")


class _Reject(Exception):
    def __init__(self, status: int, detail: str, code: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status, self.detail, self.code, self.headers = status, detail, code, headers or {}


def allowed_hosts(settings: Settings) -> frozenset[str] | None:
    """The Host names the service answers (None: any): loopback, the bound host, PLACER_ALLOWED_HOSTS."""
    extra = [_host_name(h) for h in settings.allowed_hosts.split(",") if h.strip()]
    if "*" in extra:
        return None
    bound = [] if settings.host in _WILDCARD_BINDS else [_host_name(settings.host)]
    return frozenset([*_LOOPBACK_NAMES, *bound, *extra])


def _host_name(host: str) -> str:
    """"Name:8000" -> "name", "[::1]:8000" -> "::1", "::1" -> "::1"."""
    name = host.strip().lower()
    if name.startswith("["):
        name = name[1:name.find("]")] if "]" in name else name[1:]
    elif name.count(":") == 1:
        name = name.split(":", 1)[0]
    return name.rstrip(".")


def host_allowed(host: str, allowed: frozenset[str] | None) -> bool:
    """Whether a Host header ("name", "name:port", "[v6]:port") names this service; any loopback
    address literal is accepted (no DNS name is involved, so no rebinding)."""
    if allowed is None:
        return True
    name = _host_name(host)
    if name in allowed:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class ServiceMiddleware:
    def __init__(self, app: ASGIApp, settings: Settings, metrics: ServiceMetrics) -> None:
        self.app = app
        self.settings = settings
        self.metrics = metrics
        key = settings.api_key.get_secret_value() if settings.api_key else ""
        self._expected = key.encode() if key else None
        self._hosts = allowed_hosts(settings)
        self._failures = FailureLimiter(settings.auth_failure_burst, settings.auth_failure_refill_s)

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
                self._check_host(headers)
                self._authorize(scope, headers)
                if scope["method"] in _BODY_METHODS:
                    receive = await self._bounded_body(scope, receive, headers, scope["path"])
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

    def _check_host(self, headers: dict[str, bytes]) -> None:
        host = headers.get("host")
        if host is not None and not host_allowed(host.decode("latin-1"), self._hosts):
            raise _Reject(421, f"Host {host.decode('latin-1')[:100]!r} is not a name of this service; add it to "
                          "PLACER_ALLOWED_HOSTS (comma-separated, or * for any) if it should be", "host_not_allowed")

    def _authorize(self, scope: Scope, headers: dict[str, bytes]) -> None:
        path = scope["path"]
        if self._expected is None or path in _OPEN_PATHS or path.startswith(_OPEN_PREFIXES):
            return
        client = scope.get("client")
        addr = client[0] if client else "unknown"
        wait_s = self._failures.retry_after_s(addr)
        if wait_s:
            raise _Reject(429, f"too many wrong API keys from {addr}: try again in {wait_s} s "
                          "(PLACER_AUTH_FAILURE_BURST, PLACER_AUTH_FAILURE_REFILL_S)", "too_many_attempts",
                          {"Retry-After": str(wait_s)})
        # RFC 7235: the scheme is case-insensitive; one or more spaces before the key
        scheme, _, key = headers.get("authorization", b"").partition(b" ")
        if not (scheme.lower() == b"bearer" and hmac.compare_digest(key.strip(b" "), self._expected)):
            self._failures.failed(addr)
            raise _Reject(401, "missing or wrong API key: send the header 'Authorization: Bearer <key>'",
                          "unauthorized", {"WWW-Authenticate": "Bearer"})

    def _read_json(self, body: bytes, path: str) -> Any:
        """Parse strictly; the sizes are counted before the document is walked (api.sizes)."""
        def sizes(doc: Any) -> None:
            too_big = oversized(path, doc, self.settings)
            if too_big:
                raise _Reject(422, too_big, "limit_exceeded")

        try:
            return parse_json(body, "request body", self.settings.max_json_depth, before_walk=sizes)
        except InvalidJsonError as exc:
            raise _Reject(http_status(exc), str(exc), exc.code) from None

    async def _bounded_body(self, scope: Scope, receive: Receive, headers: dict[str, bytes], path: str) -> Receive:
        """Read the whole body (at most max_body_bytes), check it, and hand it on (the parsed
        document in `scope`, see api.parsed)."""
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
            # in a thread: reading a 10 MB body strictly takes about a second
            scope[PARSED_JSON] = await anyio.to_thread.run_sync(self._read_json, body, path)
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
