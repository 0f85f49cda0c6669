"""Live progress of one solve: an event per phase, no repeated lines, and a heartbeat.

A solve spends long stretches inside one call (a CP-SAT model, the decomposition's components,
a MILP back end) that reports nothing by itself; a caller watching the CLI or polling a job must
still see time move, the phase it is in, and the best incumbent and bound. `Reporter` is the one
progress sink of a solve: strategies announce their phase and report changes; a timer thread
repeats the current state every `HEARTBEAT_S` seconds in which nothing else was reported.
A report that would repeat the previous line unchanged (same phase, message, incumbent and bound,
no result) is dropped: only the heartbeat repeats, and it says so (`heartbeat=True`).
"""
from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from placer.schema import ResultSpec

__all__ = ["HEARTBEAT_S", "PHASES", "Progress", "ProgressFn", "Reporter"]

log = logging.getLogger("placer.progress")

HEARTBEAT_S = 2.0  # at most this long without an event while a solve runs

# The phases of `placer.engine.place`, in the order they may run.
PHASES = (
    "model",          # building the problem: routes, bounds
    "baselines",      # single device, HEFT, critical path
    "stages",         # the staged critical-path heuristic
    "switch_cover",   # the critical path's groups placed as the switch cover's answer has them
    "ancestral_loads", # heads and tails raised by the loads ancestors put on an op's device (a better bound)
    "decomposition",  # series decomposition: one CP-SAT model per component, then re-fits
    "group_moves",    # group moves checked by re-timing
    "cones",          # heads and tails raised by CP-SAT sub-solves over cones (a better bound)
    "windows",        # stretches of the incumbent's timeline re-optimised by small CP-SAT models
    "cpsat",          # the monolithic CP-SAT model
    "cpsat_coarse",   # CP-SAT on the coarsened graph
    "neighbourhood",  # large-neighbourhood search
    "polish",         # group moves after CP-SAT (big graphs)
    "cones_leftover", # the time left at the end: larger cones on what the first cones proved
    "refutation",     # what the leftover cones leave: makespans refuted by sub-models of a few groups
    "windows_leftover", # what the bounds at the end leave: the window search again, from the final incumbent
    "milp",           # CBC or HiGHS on the DLPlacer MILP
    "finish",         # validating and simulating the best placement
)


@dataclass(frozen=True)
class Progress:
    """A progress report; `result` is a full validated result when an incumbent improved.

    `heartbeat` marks a periodic repeat of the current state while `phase` runs."""

    elapsed_s: float
    incumbent_ms: float | None
    bound_ms: float | None
    message: str
    result: ResultSpec | None = None
    phase: str = ""
    heartbeat: bool = False


ProgressFn = Callable[[Progress], None]


def _same(a: float | None, b: float | None) -> bool:
    return a == b or (a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12))


class Reporter:
    """Thread-safe progress sink of one solve (strategies and solver callbacks report from
    several threads). Without a sink every method is a cheap no-op.

    Use as a context manager: the heartbeat thread runs inside the `with` block."""

    def __init__(self, sink: ProgressFn | None, heartbeat_s: float = HEARTBEAT_S):
        self.sink = sink
        self.heartbeat_s = heartbeat_s
        self.began = time.perf_counter()
        self.phase_name = ""
        self.message = ""
        self.incumbent_ms: float | None = None
        self.bound_ms: float | None = None
        self._last_key: tuple | None = None
        self._last_emit = time.monotonic()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def elapsed(self) -> float:
        return time.perf_counter() - self.began

    # ----------------------------------------------------------------- reporting

    def phase(self, name: str, message: str, incumbent_ms: float | None = None, bound_ms: float | None = None,
              result: ResultSpec | None = None) -> None:
        """Enter phase `name` (one of PHASES) and report it."""
        self.phase_name = name
        self.report(message, incumbent_ms, bound_ms, result)

    def report(self, message: str, incumbent_ms: float | None = None, bound_ms: float | None = None,
               result: ResultSpec | None = None) -> None:
        """Report within the current phase; dropped when it would repeat the last line."""
        if self.sink is None:
            return
        with self._lock:
            self._merge(incumbent_ms, bound_ms)
            self.message = message
            key = (self.phase_name, message, self.incumbent_ms, self.bound_ms)
            if result is None and self._last_key is not None and key[:2] == self._last_key[:2] \
                    and _same(key[2], self._last_key[2]) and _same(key[3], self._last_key[3]):
                return
            self._last_key = key
            self._emit(result, heartbeat=False)

    def update(self, incumbent_ms: float | None = None, bound_ms: float | None = None) -> None:
        """New numbers without a line of their own (the next report or heartbeat carries them)."""
        if self.sink is None:
            return
        with self._lock:
            self._merge(incumbent_ms, bound_ms)

    def heartbeat(self) -> None:
        """Repeat the current state now (the timer thread calls this)."""
        if self.sink is None:
            return
        with self._lock:
            self._emit(None, heartbeat=True)

    def _merge(self, incumbent_ms: float | None, bound_ms: float | None) -> None:
        if incumbent_ms is not None and math.isfinite(incumbent_ms):
            self.incumbent_ms = incumbent_ms if self.incumbent_ms is None else min(self.incumbent_ms, incumbent_ms)
        if bound_ms is not None and math.isfinite(bound_ms):
            self.bound_ms = bound_ms if self.bound_ms is None else max(self.bound_ms, bound_ms)

    def _emit(self, result: ResultSpec | None, heartbeat: bool) -> None:
        assert self.sink is not None
        self._last_emit = time.monotonic()
        self.sink(Progress(self.elapsed(), self.incumbent_ms, self.bound_ms, self.message, result,
                           self.phase_name, heartbeat))

    # ----------------------------------------------------------------- heartbeat thread

    def _beat(self) -> None:
        while True:
            wait = max(0.05, self.heartbeat_s - (time.monotonic() - self._last_emit))
            if self._stop.wait(wait):
                return
            if time.monotonic() - self._last_emit >= self.heartbeat_s:
                try:
                    self.heartbeat()
                except Exception as exc:  # noqa: BLE001 - a broken sink stops the heartbeat, not the solve
                    log.warning("progress heartbeat stopped: %s", exc)
                    return

    def __enter__(self) -> Self:
        if self.sink is not None and self.heartbeat_s > 0:
            self._thread = threading.Thread(target=self._beat, name="placer-progress", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
