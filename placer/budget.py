"""The time a solve may spend, in wall-clock seconds or in deterministic work.

Every strategy of the engine (the series decomposition, re-fits, neighbourhood search,
the monolithic model) asks one `Budget` how much is left and runs CP-SAT through it.

- Wall-clock mode (the default): seconds on the clock; on a loaded machine the same
  seconds buy less search.
- Deterministic mode: CP-SAT's deterministic time (a count of work units, the same on
  any load), one worker and a fixed seed per call, and budgets that depend only on the
  work already spent. The same input gives the same answer and the same gap on any
  machine load; the wall time stretches instead. `WORK_PER_SECOND` converts the
  requested time limit into work: about what one CP-SAT worker does per second on an
  idle core of the machines this was measured on.
"""
from __future__ import annotations

import time
from typing import Any

from solvers.base import SolverRun
from solvers.registry import Limits, get_backend

__all__ = ["DETERMINISTIC_STRETCH", "WORK_PER_SECOND", "Budget"]

# CP-SAT deterministic time per second of one worker on an idle core. Measured here (2026-11-25, one
# worker, idle): 0.32 (NASNet cells, 2,214 ops), 0.47-0.51 (zoo Inception-V3, 808 ops, decomposed),
# 0.77 (BERT per head, 2,066 ops). At 0.25 a 60 s deterministic solve of Inception-V3 on the DGX-1
# quad spent 34 s and ended 15.8% from its bound; at 0.4, 48 s and 0.43%.
WORK_PER_SECOND = 0.4
# A deterministic solve takes about 1-2 times its limit on an idle core (measured 0.8-2.6x, the most on
# msr-fiddle's Inception-V3 on the DGX-1, whose window models CP-SAT counts slowly: CP-SAT's rate
# differs by model, and heuristics, stitching and checks run outside the work count); a busy
# core stretches that again (one competing process halves a worker's share). Callers that kill runs
# from outside (the service's deadline) allow this many limits.
DETERMINISTIC_STRETCH = 5.0


class Budget:
    """Time left for one solve, and the one way its strategies call CP-SAT."""

    def __init__(self, limit_s: float, deterministic: bool = False, threads: int = 2, seed: int = 0):
        self.limit_s = limit_s
        self.deterministic = deterministic
        self.threads = threads
        self.seed = seed
        self.began = time.perf_counter()
        self.work = 0.0   # deterministic time spent by CP-SAT calls, in work units
        self.solves = 0

    def elapsed(self) -> float:
        """Wall-clock seconds since the solve began (for reports, never for decisions
        in deterministic mode)."""
        return time.perf_counter() - self.began

    def spent(self) -> float:
        """Seconds of the limit spent: wall clock, or work converted at WORK_PER_SECOND."""
        return self.work / WORK_PER_SECOND if self.deterministic else self.elapsed()

    def remaining(self) -> float:
        return max(0.0, self.limit_s - self.spent())

    def solve_cpsat(self, model: Any, seconds: float, **options: Any) -> tuple[SolverRun, Any]:
        """Run CP-SAT for at most `seconds` of this budget (never past what is left);
        `options` are further `solvers.registry.Limits` fields."""
        run, solver = get_backend("cpsat").solve(model, self._limits(seconds, threads=self.threads, **options))
        self.work += run.work
        self.solves += 1
        return run, solver

    def solve_cpsat_portfolio(self, pool: Any, model: Any, seconds: float, **options: Any) -> Any:
        """`solve_cpsat` as `pool.workers` portfolio members at once (placer.portfolio), each
        with this budget's limit for `seconds`; returns a placer.portfolio.PortfolioAnswer."""
        from placer.portfolio import solve_portfolio

        answer = solve_portfolio(pool, model, self._limits(seconds, threads=1 if self.deterministic else self.threads,
                                                           **options))
        self.work += answer.run.work
        self.solves += 1
        return answer

    def _limits(self, seconds: float, **options: Any) -> Limits:
        """CP-SAT's limits for at most `seconds` of this budget (never past what is left):
        wall seconds, or work at WORK_PER_SECOND in deterministic mode."""
        seconds = max(0.01, min(seconds, self.remaining()))
        limit = seconds * WORK_PER_SECOND if self.deterministic else seconds
        return Limits(limit, seed=self.seed, deterministic=self.deterministic, **options)

    def stats(self) -> dict[str, Any]:
        return {"mode": "deterministic" if self.deterministic else "wall_clock",
                "cpsat_work": round(self.work, 3), "cpsat_calls": self.solves}
