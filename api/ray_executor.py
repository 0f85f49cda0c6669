"""Solves as Ray tasks (`PLACER_EXECUTOR=ray`, `PLACER_RAY_ADDRESS=auto|HOST:PORT`).

Each solve is one Ray task that asks for as many CPUs as the solve has threads. On its node the
task runs the very worker the local pool runs (api.pool.WorkerProcess: its own process group,
killed at the deadline, CBC included) and streams its events back (a Ray generator task):
`started` (where it runs), `progress` (incumbent and bound as they improve) and one `outcome`.

The service side (`RayWorker.run`) keeps the rules of the local pool: a cancel, or a task past
its deadline plus a margin (the node enforces the deadline itself; this is the backstop), is
stopped with `ray.cancel(force=True)`, which kills the task's Ray worker; the solve process on
the node notices its parent is gone and kills its group (api.worker). A task that Ray reports
lost (its node or its worker died) ends as Outcome "lost", and the job manager runs the job
again, counted in `interruptions`.

ray is imported here only, and this module only when PLACER_EXECUTOR=ray (api.executor).
"""
from __future__ import annotations

import logging
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, replace
from typing import Any

from api.executor import ClusterStatus, request_cpus
from api.pool import Outcome, WorkerProcess
from placer.errors import ExecutorUnavailableError

__all__ = ["RayExecutor", "RayWorker", "solve_on_node"]

log = logging.getLogger("api.ray")

_BACKSTOP_S = 5.0  # past the deadline the node enforces, the service cancels the task itself
_POLL_S = 0.1


def solve_on_node(target: str, request: dict[str, Any], deadline_s: float,
                  start_timeout_s: float) -> Iterator[dict[str, Any]]:
    """The Ray task: run one solve in a worker process on this node and stream its events."""
    import ray

    worker = WorkerProcess(target)
    worker.start(start_timeout_s)
    where = {"executor": "ray", "node_id": ray.get_runtime_context().get_node_id(),
             "host": ray.util.get_node_ip_address(), "hostname": socket.gethostname(), "pid": worker.pid}
    yield {"event": "started", "worker": where}
    events: queue.Queue[dict[str, Any]] = queue.Queue()

    def solve() -> None:
        try:
            outcome = worker.run(request, deadline_s, events.put, threading.Event())
            events.put({"event": "outcome", **asdict(outcome)})
        except Exception as exc:  # noqa: BLE001  reported as a crashed solve, never a hung task
            events.put({"event": "outcome", "kind": "crashed", "elapsed_s": 0.0,
                        "detail": f"the solve worker on node {where['host']} failed: {exc}"})

    threading.Thread(target=solve, name="solve-on-node", daemon=True).start()
    try:
        while True:
            event = events.get()
            yield event
            if event.get("event") == "outcome":
                return
    finally:
        worker.stop()


class RayWorker:
    """A slot's worker: each `run` is one Ray task (api.executor.SolveWorker)."""

    def __init__(self, executor: RayExecutor, target: str) -> None:
        self._executor = executor
        self.target = target
        self.log_context: dict[str, Any] = {}

    @property
    def pid(self) -> int | None:
        return None  # the solve's process lives on a node; the job's `worker.pid` names it

    def start(self, timeout_s: float) -> None:
        pass

    def alive(self) -> bool:
        return self._executor.connected

    def kill(self, wait_s: float = 5.0) -> bool:
        return True

    def stop(self) -> None:
        pass

    def run(self, request: dict[str, Any], deadline_s: float, on_progress: Callable[[dict[str, Any]], None],
            cancelled: threading.Event,
            on_start: Callable[[dict[str, Any]], None] | None = None) -> Outcome:
        """Submit the solve and follow its events until it ends, is cancelled or is overdue."""
        import ray
        from ray.exceptions import RayError, RayTaskError, TaskCancelledError

        cpus = self._executor.task_cpus(request_cpus(request))
        submitted = time.monotonic()
        started: float | None = None
        last: dict[str, Any] | None = None
        task = self._executor.submit(self.target, request, deadline_s, cpus)
        try:
            while True:
                now = time.monotonic()
                elapsed = now - (started or now)
                if cancelled.is_set():
                    ray.cancel(task, force=True)
                    return Outcome("cancelled", elapsed, last_progress=last)
                if started is None and now - submitted > self._executor.start_timeout_s:
                    ray.cancel(task, force=True)
                    return Outcome("crashed", 0.0, detail=(
                        f"no node of the Ray cluster started the solve within {self._executor.start_timeout_s:g} s "
                        f"(it needs {cpus} CPUs on one node)"))
                if started is not None and elapsed > deadline_s + _BACKSTOP_S:
                    ray.cancel(task, force=True)
                    return Outcome("deadline", elapsed, last_progress=last,
                                   detail=f"cancelled at the deadline of {deadline_s:g} s")
                ready, _ = ray.wait([task], timeout=_POLL_S)
                if not ready:
                    continue
                try:
                    event = ray.get(next(task))
                except StopIteration:
                    return Outcome("crashed", elapsed, last_progress=last,
                                   detail="the solve task ended without an answer")
                except TaskCancelledError:  # not by us (we return before reading again)
                    return Outcome("lost", elapsed, last_progress=last, detail="Ray cancelled the solve task")
                except RayTaskError as exc:
                    return Outcome("crashed", elapsed, last_progress=last,
                                   detail=f"the solve task failed: {_first_line(exc)}")
                except RayError as exc:  # the node or the task's worker died: run it again
                    return Outcome("lost", elapsed, last_progress=last,
                                   detail=f"the Ray node running the solve was lost ({type(exc).__name__})")
                kind = event.get("event")
                if kind == "started":
                    started = time.monotonic()
                    if on_start is not None:
                        on_start(event["worker"])
                elif kind == "progress":
                    last = event
                    on_progress(event)
                elif kind == "outcome":
                    fields = {k: event.get(k) for k in ("kind", "elapsed_s", "result", "error", "detail")}
                    return Outcome(**{**fields, "detail": fields["detail"] or "",
                                      "last_progress": event.get("last_progress") or last})
        finally:
            self._executor.task_done()


def _first_line(exc: BaseException) -> str:
    cause = getattr(exc, "cause", None)
    text = str(cause if cause is not None else exc).strip()
    return text.splitlines()[-1] if text else type(exc).__name__


class RayExecutor:
    """The service as a Ray driver: `open()` connects, each slot gets a `RayWorker`."""

    name = "ray"

    def __init__(self, address: str, start_timeout_s: float) -> None:
        self.address = address
        self.start_timeout_s = start_timeout_s
        self.connected = False
        self._task: Any = None
        self._lock = threading.Lock()
        self._running = 0
        self._largest_node_cpus = 0.0
        self._status = ClusterStatus("ray", address, 0, 0.0, 0.0, 0, problem="not connected yet")

    def open(self) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailableError("PLACER_EXECUTOR=ray needs Ray: pip install 'placer[ray]'") from None
        try:
            ray.init(address=self.address, namespace="placer", log_to_driver=False, logging_level=logging.WARNING,
                     configure_logging=False)
        except Exception as exc:  # ConnectionError, ValueError, RuntimeError: all mean it cannot be used
            raise ExecutorUnavailableError(f"the Ray cluster at PLACER_RAY_ADDRESS={self.address!r} cannot be "
                                           f"reached: {exc}") from exc
        self._task = ray.remote(solve_on_node)
        self.connected = True
        self.refresh()
        log.info("connected to the Ray cluster", extra={"address": self.address, **self._status.public()})

    def submit(self, target: str, request: dict[str, Any], deadline_s: float, cpus: int) -> Any:
        with self._lock:
            self._running += 1
        try:
            return self._task.options(num_cpus=cpus, max_retries=0, name="placer-solve").remote(
                target, request, deadline_s, self.start_timeout_s)
        except BaseException:
            self.task_done()
            raise

    def task_cpus(self, threads: int) -> int:
        """CPUs to ask for: the solve's threads, but no more than the largest live node has (a
        task no node can hold would wait forever; the solve runs its threads on fewer CPUs)."""
        largest = int(self._largest_node_cpus)
        return max(1, min(threads, largest)) if largest >= 1 else threads

    def task_done(self) -> None:
        with self._lock:
            self._running -= 1

    def new_worker(self, target: str) -> RayWorker:
        return RayWorker(self, target)

    def refresh(self) -> None:
        import ray

        with self._lock:
            running = self._running
        try:
            nodes = [n for n in ray.nodes() if n.get("Alive")]
            total, free = ray.cluster_resources(), ray.available_resources()
        except Exception as exc:  # noqa: BLE001  the GCS is unreachable: /healthz says so
            self._status = ClusterStatus("ray", self.address, 0, 0.0, 0.0, running,
                                         problem=f"the Ray cluster at {self.address} does not answer: {exc}")
            return
        problem = None if nodes else f"the Ray cluster at {self.address} has no live node"
        self._largest_node_cpus = max((float(n.get("Resources", {}).get("CPU", 0.0)) for n in nodes), default=0.0)
        self._status = ClusterStatus("ray", self.address, len(nodes), float(total.get("CPU", 0.0)),
                                     float(free.get("CPU", 0.0)), running, problem=problem)

    def cluster(self) -> ClusterStatus:
        """The nodes as the last `refresh` saw them; the running tasks as of now."""
        with self._lock:
            return replace(self._status, tasks_running=self._running)

    def close(self) -> None:
        if self.connected:
            import ray

            self.connected = False
            ray.shutdown()
