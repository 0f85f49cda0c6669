"""The FastAPI application: `create_app(settings)` wires routers, errors, middleware and the
job manager; `app` is the instance `uvicorn api.main:app` serves (settings from PLACER_*)."""
from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from fastapi.concurrency import run_in_threadpool

import placer
from api.compute import compute_limiter
from api.docs import install_docs
from api.errors import install_error_handlers
from api.jobs import JobManager
from api.metrics import ServiceMetrics
from api.middleware import ServiceMiddleware
from api.routes import crossover, hardware, health, jobs, models, placements, simulations, validations
from api.settings import Settings
from placer.engine import available_solvers

__all__ = ["app", "create_app"]

log = logging.getLogger("api.main")

_DESCRIPTION = """Optimal device placement for deep-learning training steps (DLPlacer MILP, CP-SAT),
an execution simulator, a validator and the hybrid DP x MP crossover calculator.

Documents: `placer.graph/v1`, `placer.hardware/v1` (or a preset name), `placer.result/v1`.
Times in ms, sizes in bytes, bandwidth in GB/s. Errors: `{"detail": sentence, "code": code}`,
the sentence naming the field and the op, edge or device."""


def create_app(settings: Settings | None = None) -> FastAPI:
    settings = settings or Settings()
    manager = JobManager(settings)
    metrics = ServiceMetrics(queue_depth=manager.queue_depth, running=manager.running, cluster=manager.cluster)
    manager.metrics = metrics

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await run_in_threadpool(manager.start)
        app.state.solvers = available_solvers()
        # the OpenAPI document takes ~0.1 s to build and FastAPI builds it on the event loop at the
        # first GET /openapi.json: build (and cache) it here instead
        await run_in_threadpool(app.openapi)
        if not await run_in_threadpool(manager.wait_ready, settings.worker_start_timeout_s):
            log.error("not every solve worker started; serving anyway (see /healthz)")
        log.info("placer service ready", extra={"workers": settings.workers, "db_path": str(settings.db_path),
                                                "executor": settings.executor,
                                                "solvers": app.state.solvers})
        try:
            yield
        finally:
            await run_in_threadpool(manager.stop)
            log.info("placer service stopped")

    app = FastAPI(title="placer", version=placer.__version__, description=_DESCRIPTION, lifespan=lifespan,
                  docs_url=None, redoc_url=None)  # /docs from the package's own assets (api/docs.py)
    app.state.settings = settings
    app.state.jobs = manager
    app.state.metrics = metrics
    app.state.compute_limiter = compute_limiter(settings.compute_threads)
    app.state.solvers = {}
    install_error_handlers(app)
    install_docs(app)
    for module in (placements, jobs, simulations, validations, crossover, hardware, models, health):
        app.include_router(module.router)
    app.add_middleware(ServiceMiddleware, settings=settings, metrics=metrics)
    if settings.api_key is not None:
        _declare_bearer(app)
    return app


def _declare_bearer(app: FastAPI) -> None:
    """Show the API key in the OpenAPI document (the middleware enforces it)."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = build()
            schema.setdefault("components", {})["securitySchemes"] = {
                "bearer": {"type": "http", "scheme": "bearer", "description": "PLACER_API_KEY"}}
            schema["security"] = [{"bearer": []}]
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]


app = create_app()
