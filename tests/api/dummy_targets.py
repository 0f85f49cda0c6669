"""Worker targets for the pool tests: behave like a solver without being one."""
from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from typing import Any

from placer.errors import InvalidGraphError

Emit = Callable[[dict[str, Any]], None]


def echo(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    emit({"elapsed_s": 0.0, "incumbent_ms": None, "bound_ms": None, "message": "echo", "result": None})
    return {"echo": request, "pid": os.getpid()}


def stubborn(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Reports an incumbent, then starts a child process (as PuLP starts CBC) and never returns."""
    incumbent = {"format": "placer.result/v1", "status": "feasible", "solver": "cbc", "makespan_ms": 10.0,
                 "lower_bound_ms": 5.0, "gap": 0.5, "placement": {"a": "gpu0"}}
    if request.get("with_incumbent", True):
        emit({"elapsed_s": 0.01, "incumbent_ms": 10.0, "bound_ms": 5.0, "message": "heuristic",
              "result": incumbent})
        emit({"elapsed_s": 0.02, "incumbent_ms": 10.0, "bound_ms": 8.0, "message": "bound moved",
              "result": None})
    child = subprocess.Popen(["sleep", "300"])
    with open(request["pid_file"], "w") as fh:
        fh.write(f"{os.getpid()} {child.pid}\n")
    while True:  # ignores every time limit, like CBC in presolve
        time.sleep(0.05)


def bad_input(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    raise InvalidGraphError("graph: ops[0] (id 'a').time_ms: must be finite")


def crash(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    os._exit(3)


def dies_after_incumbent(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """Reports an incumbent, then is killed (as by the OOM killer) before it answers."""
    emit({"elapsed_s": 0.01, "incumbent_ms": 10.0, "bound_ms": 5.0, "message": "heuristic",
          "result": {"format": "placer.result/v1", "status": "feasible", "solver": "cbc", "makespan_ms": 10.0,
                     "lower_bound_ms": 5.0, "gap": 0.5, "placement": {"a": "gpu0"}}})
    time.sleep(0.2)  # the event reaches the service before the worker dies
    os.kill(os.getpid(), 9)
    raise AssertionError("unreachable")


def no_solution(request: dict[str, Any], emit: Emit) -> dict[str, Any]:
    """What the engine answers when the time limit passes before any placement is found."""
    return {"format": "placer.result/v1", "status": "no_solution", "solver": "cpsat", "lower_bound_ms": 4.0,
            "reason": "time limit reached before any placement was found"}
