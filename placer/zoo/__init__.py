"""The model zoo: analytic, profiling-free training-step graphs of well-known networks.

Each model is built per sample from its published architecture (`placer.zoo.network`,
`placer.zoo.layers`), then `placer.zoo.training` emits forward, backward and weight-update ops
for a batch size as a placer.graph/v1 document. The graph carries hardware-free quantities
(FLOPs, bytes, memory); the hardware file carries the rates (SMSG's split).

    >>> from placer.zoo import build, list_models
    >>> "resnet50" in list_models()
    True
    >>> graph = build("resnet50", batch=32)
    >>> len(graph["ops"])
    458
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from placer.errors import InputError, UnknownModelError
from placer.zoo.bert import bert_base
from placer.zoo.biglstm import biglstm
from placer.zoo.classic import alexnet, vgg16
from placer.zoo.gnmt import gnmt
from placer.zoo.inception import inception_v3
from placer.zoo.network import Network
from placer.zoo.resnet import resnet50
from placer.zoo.training import training_graph

__all__ = ["DEFAULT_BATCH", "ModelSummary", "build", "list_models", "network", "summarize"]

DEFAULT_BATCH = 32

_MODELS: MappingProxyType[str, Callable[[], Network]] = MappingProxyType({
    "alexnet": alexnet,
    "vgg16": vgg16,
    "resnet50": resnet50,
    "inception_v3": inception_v3,
    "gnmt": gnmt,
    "biglstm": biglstm,
    "bert_base": bert_base,
})


@dataclass(frozen=True)
class ModelSummary:
    """One row of `placer zoo --list`: graph size at `batch`, per-sample forward FLOPs."""

    name: str
    description: str
    batch: int
    ops: int
    edges: int
    parameters: int
    forward_flops_per_sample: float
    memory_bytes: int


def list_models() -> list[str]:
    """Names of the zoo's models, in listing order."""
    return list(_MODELS)


def _check_batch(batch: Any) -> int:
    if isinstance(batch, bool) or not isinstance(batch, int):
        raise InputError(f"batch must be an integer, got {batch!r}")
    if batch < 1:
        raise InputError(f"batch must be >= 1, got {batch}")
    return batch


def network(name: str) -> Network:
    """The per-sample forward network of model `name` (parameters, FLOPs, layers)."""
    try:
        builder = _MODELS[name]
    except (KeyError, TypeError):
        raise UnknownModelError(
            f"zoo model {name!r} does not exist; known models: {', '.join(_MODELS)}"
        ) from None
    return builder()


def build(name: str, batch: int = DEFAULT_BATCH) -> dict[str, Any]:
    """The placer.graph/v1 training-step graph of model `name` at `batch` samples."""
    batch = _check_batch(batch)
    return training_graph(network(name), batch)


def summarize(name: str, batch: int = DEFAULT_BATCH) -> ModelSummary:
    """Size, parameters, per-sample forward FLOPs and total memory of model `name` at `batch`."""
    batch = _check_batch(batch)
    net = network(name)
    graph = training_graph(net, batch)
    return ModelSummary(
        name=name,
        description=net.description,
        batch=batch,
        ops=len(graph["ops"]),
        edges=len(graph["edges"]),
        parameters=net.parameter_count,
        forward_flops_per_sample=net.forward_flops(1),
        memory_bytes=sum(op["memory_bytes"] for op in graph["ops"]),
    )
