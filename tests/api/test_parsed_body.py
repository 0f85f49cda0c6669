"""Request bodies are parsed once (api.parsed): FastAPI gets the middleware's document."""
from __future__ import annotations

import asyncio

from fastapi.routing import APIRoute

from api.parsed import PARSED_JSON, ParsedBodyRoute, _ParsedBodyRequest


def test_a_request_answers_the_parsed_document_without_reading_the_body_again() -> None:
    async def receive() -> dict:
        raise AssertionError("the body was read again")

    scope = {"type": "http", "method": "POST", "path": "/", "headers": [], PARSED_JSON: {"ops": [1, 2.5]}}
    assert asyncio.run(_ParsedBodyRequest(scope, receive).json()) == {"ops": [1, 2.5]}


def test_every_route_with_a_json_body_uses_the_parsed_document() -> None:
    from api.routes import crossover, hardware, health, jobs, models, placements, simulations, validations

    routes = [r for m in (crossover, hardware, health, jobs, models, placements, simulations, validations)
              for r in m.router.routes if isinstance(r, APIRoute)]
    with_body = [r for r in routes if r.body_field is not None]
    assert {r.path for r in with_body} >= {"/v1/placements", "/v1/simulations", "/v1/validations", "/v1/crossover"}
    assert all(isinstance(r, ParsedBodyRoute) for r in with_body), [r.path for r in with_body]
