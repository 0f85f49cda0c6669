"""GET /v1/models, GET /v1/models/{name}?batch=N: the model zoo as placer.graph/v1."""
from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel

from api.routes import error_responses
from placer import zoo
from placer.schema import GraphSpec, parse_graph

__all__ = ["router"]

router = APIRouter(prefix="/v1/models", tags=["models"])

Batch = Annotated[int, Query(ge=1, le=65536, description="samples per training step")]


class ModelSummary(BaseModel):
    name: str
    description: str
    batch: int
    ops: int
    edges: int
    parameters: int
    forward_flops_per_sample: float
    memory_bytes: int


def _summaries(batch: int) -> list[dict[str, Any]]:
    return [asdict(zoo.summarize(name, batch)) for name in zoo.list_models()]


@router.get("", response_model=list[ModelSummary], summary="List the zoo's models",
            responses=error_responses(401, 422))
async def list_models(batch: Batch = zoo.DEFAULT_BATCH) -> Any:
    """Every model with its training-step graph size at `batch`, parameters and forward FLOPs."""
    return await run_in_threadpool(_summaries, batch)


@router.get("/{name}", response_model=GraphSpec, response_model_exclude_none=True,
            summary="A model's training-step graph", responses=error_responses(401, 404, 422))
async def get_model(name: Annotated[str, Path(max_length=128, examples=["resnet50"])],
                    batch: Batch = zoo.DEFAULT_BATCH) -> Any:
    """Forward, backward and weight-update ops of the model at `batch`, costed analytically
    (FLOPs, bytes accessed, memory): POST it to /v1/placements with any hardware."""
    return await run_in_threadpool(lambda: parse_graph(zoo.build(name, batch)))
