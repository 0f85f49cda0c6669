"""Where solves run: one protocol, two implementations.

The job manager (api.jobs) feeds each of its slots' workers one solve at a time through the
`SolveWorker` protocol, and never asks what kind of worker it holds:

- `LocalExecutor` (the default, `PLACER_EXECUTOR=local`): a warm worker process per slot on
  this machine (api.pool.WorkerProcess), killed at its deadline.
- `RayExecutor` (`PLACER_EXECUTOR=ray`, api.ray_executor): each solve is a Ray task on a
  cluster, sized by its threads. Imported only when chosen: the default service never
  imports ray.

`cluster()` is what /healthz and /metrics show of the machines solves run on.
"""
from __future__ import annotations

import os
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from api.pool import Outcome, WorkerProcess
from api.settings import Settings

__all__ = ["ClusterStatus", "Executor", "LocalExecutor", "SolveWorker", "make_executor", "request_cpus"]


@dataclass(frozen=True)
class ClusterStatus:
    """The machines solves run on, as last seen: `problem` says why it cannot be used now."""

    executor: str
    address: str | None
    nodes: int
    cpus: float
    cpus_free: float
    tasks_running: int
    problem: str | None = None

    def public(self) -> dict[str, Any]:
        return {"executor": self.executor, "address": self.address, "nodes": self.nodes, "cpus": self.cpus,
                "cpus_free": self.cpus_free, "tasks_running": self.tasks_running}


class SolveWorker(Protocol):
    """What a slot of the job manager drives: start once, then one `run` at a time."""

    log_context: dict[str, Any]

    @property
    def pid(self) -> int | None: ...

    def start(self, timeout_s: float) -> None: ...

    def alive(self) -> bool: ...

    def run(self, request: dict[str, Any], deadline_s: float, on_progress: Callable[[dict[str, Any]], None],
            cancelled: threading.Event,
            on_start: Callable[[dict[str, Any]], None] | None = None) -> Outcome: ...

    def kill(self, wait_s: float = 5.0) -> bool: ...

    def stop(self) -> None: ...


class Executor(Protocol):
    """Makes the workers of the job manager's slots and tells where they run."""

    name: str

    def open(self) -> None:
        """Connect (raise ExecutorUnavailableError when it cannot be used)."""

    def new_worker(self, target: str) -> SolveWorker: ...

    def refresh(self) -> None:
        """Look at the cluster again (the job manager's keeper calls it periodically)."""

    def cluster(self) -> ClusterStatus: ...

    def close(self) -> None: ...


def request_cpus(request: dict[str, Any]) -> int:
    """The CPUs one solve uses: its threads (a placement's `options.threads`), at least one."""
    options = request.get("options") or {}
    try:
        return max(1, int(options.get("threads", 1)))
    except (TypeError, ValueError):
        return 1


class LocalExecutor:
    """Worker processes on this machine (the embedded default)."""

    name = "local"

    def __init__(self, running: Callable[[], int]) -> None:
        self._running = running

    def open(self) -> None:
        pass

    def new_worker(self, target: str) -> SolveWorker:
        return WorkerProcess(target)

    def refresh(self) -> None:
        pass

    def cluster(self) -> ClusterStatus:
        cpus = float(len(os.sched_getaffinity(0)))
        return ClusterStatus(executor="local", address=socket.gethostname(), nodes=1, cpus=cpus,
                             cpus_free=cpus, tasks_running=self._running())

    def close(self) -> None:
        pass


def make_executor(settings: Settings, running: Callable[[], int]) -> Executor:
    """The executor `settings.executor` names; ray is imported only for "ray"."""
    if settings.executor == "ray":
        from api.ray_executor import RayExecutor

        return RayExecutor(settings.ray_address, settings.worker_start_timeout_s)
    return LocalExecutor(running)
