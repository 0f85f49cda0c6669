"""Wall-clock runs of a step on real devices, shared by profiling and `placer measure`."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

__all__ = ["synchroniser", "timed_runs_ms"]


def synchroniser(torch: Any, devices: list[str]) -> Callable[[], None]:
    """A function that waits for every CUDA device among `devices` (CPU work is synchronous)."""
    cuda = sorted({str(d) for d in devices if str(d).startswith("cuda")})

    def sync() -> None:
        for device in cuda:
            torch.cuda.synchronize(device)

    return sync


def timed_runs_ms(step: Callable[[], Any], *, runs: int, warmup: int, sync: Callable[[], None]) -> list[float]:
    """`warmup` untimed runs, then the times of `runs` runs in ms, synchronised around each."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(runs):
        sync()
        start = time.perf_counter()
        step()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return times
