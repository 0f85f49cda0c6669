"""What a solve worker runs (the default `Settings.solve_target`): one request document in,
one answer document out. Runs inside the worker process, never in the service process.

Request kinds:
- `{"kind": "placement", "graph", "hardware", "options"}`: `placer.engine.place`, answering
  placer.result/v1; every improved incumbent goes out as a progress event with its full
  validated result, which is what the service returns if it must kill the worker.
- `{"kind": "crossover", "config"}`: the DP x MP calculator with engine-computed SU^M.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

# Imported when the worker starts (not per request): a warm worker answers small solves fast.
from placer.crossover import parse_config, run
from placer.engine import PlaceOptions, place
from placer.schema import parse_graph, parse_hardware

__all__ = ["progress_event", "run_request", "warm_up"]

Emit = Callable[[dict[str, Any]], None]


def progress_event(progress: Any) -> dict[str, Any]:
    """A `placer.engine.Progress` as a JSON-ready event."""
    return {
        "elapsed_s": progress.elapsed_s,
        "incumbent_ms": progress.incumbent_ms,
        "bound_ms": progress.bound_ms,
        "message": progress.message,
        "phase": progress.phase,
        "heartbeat": progress.heartbeat,
        "result": progress.result.model_dump(mode="json") if progress.result is not None else None,
    }


def _placement(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    graph = parse_graph(request["graph"])
    hardware = parse_hardware(request["hardware"])
    options = PlaceOptions.model_validate(request.get("options") or {})
    result = place(graph, hardware, options, progress=lambda p: emit(progress_event(p)))
    return result.model_dump(mode="json")


def _crossover(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    began = time.perf_counter()
    config = parse_config(request["config"])

    def forward(message: str) -> None:
        emit({"elapsed_s": time.perf_counter() - began, "incumbent_ms": None, "bound_ms": None,
              "message": message, "result": None})

    return run(config, progress=forward, allow_files=False).to_dict()


_KINDS: dict[str, Callable[[dict[str, Any], Emit], dict[str, Any]]] = {
    "placement": _placement,
    "crossover": _crossover,
}


def warm_up() -> None:
    """Import the solver libraries now: about 1.3 s that would otherwise land on the first solve
    each worker runs (the engine imports them lazily). The worker calls this before "ready"."""
    import pulp  # noqa: F401  (imports highspy too)
    from ortools.sat.python import cp_model  # noqa: F401


def run_request(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Dispatch on `request["kind"]`."""
    kind = request.get("kind")
    if kind not in _KINDS:
        raise ValueError(f"unknown request kind {kind!r}")
    return _KINDS[kind](request, emit)
