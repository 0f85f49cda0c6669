"""Request bodies parsed once: by the middleware, in a thread, not again on the event loop.

`api.middleware` reads every JSON body strictly (placer.jsondoc) in a worker thread and keeps
the document in the ASGI scope. FastAPI would parse the same bytes again with `json.loads` on
the event loop (0.1-0.2 s for a body near 10 MB, during which /healthz waits); routes of
`ParsedBodyRoute` hand FastAPI the middleware's document instead.
"""
from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request, Response
from fastapi.routing import APIRoute

__all__ = ["PARSED_JSON", "ParsedBodyRoute"]

PARSED_JSON = "placer.parsed_json"  # scope key of the document the middleware parsed


class _ParsedBodyRequest(Request):
    async def json(self) -> Any:
        if not hasattr(self, "_json") and PARSED_JSON in self.scope:
            self._json = self.scope[PARSED_JSON]
        return await super().json()


class ParsedBodyRoute(APIRoute):
    """An APIRoute whose handler reads the JSON body the middleware already parsed."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()

        async def parsed_body_handler(request: Request) -> Response:
            return await handler(_ParsedBodyRequest(request.scope, request.receive))

        return parsed_body_handler
