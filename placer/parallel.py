"""Independent sub-solves of one solve, run one after another, in local processes, or as Ray tasks.

The engine's series decomposition solves components that share nothing while they are
solved (placer.decompose). A pool runs such calls; the caller combines the answers in item
order, so which worker ran an item never changes the answer (with deterministic work
limits and fixed seeds, the answer is the same on every run with the same worker count).

- `SerialPool` (`workers=1`, the default): in this process, exactly as before.
- `ProcessPool` (`placer solve --workers N`): N local processes (spawned, so no CP-SAT thread
  is forked), so a 16-core workstation uses its cores.
- `RayPool` (`placer solve --ray ADDRESS`, API option `"ray": true`): Ray tasks on a cluster,
  each asking for the CPUs of one sub-solve; `workers` is how many run at once.

An item that does not come back in time (a lost node, a killed process) comes back as None:
the caller treats it as a sub-solve that found nothing, which keeps every bound valid.
ray is imported only by `RayPool`.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

from placer.errors import ExecutorUnavailableError

__all__ = ["ProcessPool", "RayPool", "SerialPool", "SubSolvePool", "open_pool", "pool_for"]

S = TypeVar("S")
T = TypeVar("T")
R = TypeVar("R")


class SubSolvePool(Protocol):
    """Runs `fn(shared, item)` for each item; results in item order, None for an item lost."""

    workers: int
    places: set[str]  # where items ran ("pid 123", "node 5f3c..."): what the stats report

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T],
            timeout_s: float | None = None) -> list[R | None]: ...

    def close(self) -> None: ...


class SerialPool:
    """One item after another in this process."""

    workers = 1

    def __init__(self) -> None:
        self.places: set[str] = set()

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T],
            timeout_s: float | None = None) -> list[R | None]:
        if items:
            self.places.add(f"pid {os.getpid()}")
        return [fn(shared, item) for item in items]

    def close(self) -> None:
        pass


def _where_local(fn: Callable[[S, T], R], shared: S, item: T) -> tuple[R, str]:
    return fn(shared, item), f"pid {os.getpid()}"


class ProcessPool:
    """`workers` local processes, started once per solve (spawn: a fresh interpreter each)."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.places: set[str] = set()
        self._pool = concurrent.futures.ProcessPoolExecutor(
            max_workers=workers, mp_context=multiprocessing.get_context("spawn"))

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T],
            timeout_s: float | None = None) -> list[R | None]:
        futures = [self._pool.submit(_where_local, fn, shared, item) for item in items]
        return _collect(futures, lambda future, wait_s: future.result(timeout=wait_s),
                        (concurrent.futures.TimeoutError, concurrent.futures.process.BrokenProcessPool),
                        lambda future: future.cancel(), timeout_s, self.places)

    def close(self) -> None:
        # a sub-solve still running past its time is not waited for: its process is killed
        for process in list(getattr(self._pool, "_processes", {}).values()):
            if process.is_alive():
                process.kill()
        self._pool.shutdown(wait=True, cancel_futures=True)


def _where_ray(fn: Callable[[S, T], R], shared: S, item: T) -> tuple[R, str]:
    import ray

    return fn(shared, item), f"node {ray.get_runtime_context().get_node_id()}"


class RayPool:
    """Ray tasks on the cluster at `address` ("auto": the one this machine belongs to)."""

    _init_lock = threading.Lock()

    def __init__(self, address: str, workers: int | None, cpus_per_item: int) -> None:
        try:
            import ray
        except ImportError:
            raise ExecutorUnavailableError("--ray needs Ray: pip install 'placer[ray]'") from None
        with RayPool._init_lock:
            self._owner = not ray.is_initialized()
            if self._owner:
                try:
                    ray.init(address=address, namespace="placer", log_to_driver=False, configure_logging=False,
                             logging_level=logging.WARNING)
                except Exception as exc:  # ConnectionError, ValueError, RuntimeError alike
                    raise ExecutorUnavailableError(f"the Ray cluster at {address!r} cannot be reached: {exc}") from exc
        nodes = [n for n in ray.nodes() if n.get("Alive")]
        largest = max((int(n.get("Resources", {}).get("CPU", 0)) for n in nodes), default=1)
        self.cpus_per_item = max(1, min(cpus_per_item, largest))  # a task no node holds would wait forever
        total = int(sum(n.get("Resources", {}).get("CPU", 0) for n in nodes))
        self.workers = workers or max(1, total // self.cpus_per_item)
        self.places: set[str] = set()
        # SPREAD: CPU-heavy sub-solves go to the least loaded nodes instead of packing the first
        self._task = ray.remote(_where_ray).options(num_cpus=self.cpus_per_item, max_retries=0,
                                                    scheduling_strategy="SPREAD")

    def map(self, fn: Callable[[S, T], R], shared: S, items: Sequence[T],
            timeout_s: float | None = None) -> list[R | None]:
        import ray
        from ray.exceptions import GetTimeoutError, RayError, RayTaskError

        def get(ref: Any, wait_s: float | None) -> tuple[R, str]:
            try:
                return ray.get(ref, timeout=wait_s)
            except RayTaskError as exc:  # the sub-solve itself raised: a bug to see, not a lost node
                raise RuntimeError(f"a sub-solve failed in its Ray task: {exc}") from exc

        shared_ref = ray.put(shared)  # sent to the object store once, not once per item
        refs = [self._task.remote(fn, shared_ref, item) for item in items]
        return _collect(refs, get, (GetTimeoutError, RayError), lambda ref: ray.cancel(ref, force=True),
                        timeout_s, self.places)

    def close(self) -> None:
        if self._owner:
            import ray

            ray.shutdown()


def _collect(pending: Sequence[Any], get: Callable[[Any, float | None], tuple[R, str]],
             lost: tuple[type[BaseException], ...], drop: Callable[[Any], object], timeout_s: float | None,
             places: set[str]) -> list[R | None]:
    """The results of `pending` in order, all within `timeout_s`; None (and `drop`) for one that
    raised one of `lost` (too late, its worker or node died)."""
    end = None if timeout_s is None else time.monotonic() + timeout_s
    results: list[R | None] = []
    for handle in pending:
        try:
            value, where = get(handle, None if end is None else max(0.0, end - time.monotonic()))
        except lost:
            drop(handle)
            results.append(None)
            continue
        places.add(where)
        results.append(value)
    return results


def open_pool(workers: int = 1, ray_address: str | None = None, cpus_per_item: int = 1) -> SubSolvePool:
    """The pool the options ask for: Ray when given an address, else processes past one worker."""
    if ray_address:
        return RayPool(ray_address, workers if workers > 1 else None, cpus_per_item)
    if workers > 1:
        return ProcessPool(workers)
    return SerialPool()


@contextlib.contextmanager
def pool_for(workers: int, ray_address: str | None, cpus_per_item: int) -> Iterator[SubSolvePool | None]:
    """The pool a solve's options ask for, closed afterwards; None for one worker and no Ray
    (the caller then runs its sub-solves itself, exactly as it always did)."""
    if workers <= 1 and not ray_address:
        yield None
        return
    pool = open_pool(workers, ray_address, cpus_per_item)
    try:
        yield pool
    finally:
        pool.close()
