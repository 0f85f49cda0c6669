"""FastAPI dependencies: the app's settings, job manager and metrics, as `Annotated` aliases."""
from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from api.jobs import JobManager
from api.metrics import ServiceMetrics
from api.settings import Settings

__all__ = ["JobsDep", "MetricsDep", "SettingsDep"]


def get_settings(request: Request) -> Settings:
    return request.app.state.settings


def get_jobs(request: Request) -> JobManager:
    return request.app.state.jobs


def get_metrics(request: Request) -> ServiceMetrics:
    return request.app.state.metrics


SettingsDep = Annotated[Settings, Depends(get_settings)]
JobsDep = Annotated[JobManager, Depends(get_jobs)]
MetricsDep = Annotated[ServiceMetrics, Depends(get_metrics)]
