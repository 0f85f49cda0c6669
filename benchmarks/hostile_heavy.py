"""Heavy but legal requests: each must be answered within its budget, or refused (4xx) within
1 s, while /healthz stays responsive. Bodies are built lazily (the 100k-op chain is 8 MB)."""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.graphs import fully_connected_hardware

__all__ = ["Heavy", "heavy_cases", "judge_heavy"]

REFUSE_S = 1.0


@dataclass(frozen=True)
class Heavy:
    """`must`: "answer-or-refuse" (2xx within budget_s or 4xx within 1 s), "refuse" (4xx within
    1 s: over a documented size), "accepted" (202 within budget_s)."""

    id: str
    what: str
    target: str
    build: Callable[[], dict[str, Any]]
    budget_s: float
    must: str = "answer-or-refuse"
    timeout_s: float = 120.0
    time_limit_s: float | None = None  # a solve's own limit, reported with its overrun


def full_mesh(n: int) -> dict[str, Any]:
    """n GPUs of 16 GB, every pair linked at 25 GB/s."""
    return fully_connected_hardware(n, memory_bytes=16_000_000_000) | {"name": f"mesh{n}"}


def chain(n: int) -> dict[str, Any]:
    return {"format": "placer.graph/v1", "name": f"chain{n}",
            "ops": [{"id": f"o{i}", "time_ms": 1.0} for i in range(n)],
            "edges": [{"src": f"o{i}", "dst": f"o{i + 1}", "bytes": 1000} for i in range(n - 1)]}


def layered(n: int, width: int = 6) -> dict[str, Any]:
    """Deterministic layered DAG (no randomness: op i reads two ops of the previous layer)."""
    ops = [{"id": f"op{i}", "time_ms": 0.5 + (i * 37 % 45) / 10} for i in range(n)]
    edges = []
    for i in range(width, n):
        start = (i // width - 1) * width
        for j in sorted({start + i % width, start + (i * 7 + 3) % width}):
            edges.append({"src": f"op{j}", "dst": f"op{i}", "bytes": (1 + (i * j) % 49) * 1_000_000})
    return {"format": "placer.graph/v1", "name": f"layered{n}", "ops": ops, "edges": edges}


FOUR_GPUS = full_mesh(4) | {"name": "four-gpus"}
TWO_OPS = {"ops": [{"id": "a", "time_ms": 1.0}, {"id": "b", "time_ms": 1.0}],
           "edges": [{"src": "a", "dst": "b", "bytes": 1_000_000}]}


def _crossover(n: int) -> dict[str, Any]:
    return {"format": "placer.crossover/v1", "name": f"devices{n}", "devices": list(range(1, n + 1)),
            "epochs": {"by_width": {"1": 1.0, str(n): 2.0}}, "mp_speedup": {"2": 1.5},
            "allow_extrapolation": True}


def _simulation(n: int) -> dict[str, Any]:
    graph = layered(n)
    return {"graph": graph, "hardware": FOUR_GPUS,
            "placement": {op["id"]: f"gpu{i // 50 % 4}" for i, op in enumerate(graph["ops"])}}


def heavy_cases(max_ops: int = 5000) -> list[Heavy]:
    cases = [Heavy(f"mesh{n}", f"2-op graph on a {n}-GPU full mesh ({n * (n - 1) // 2:,} links), cpsat 2 s",
                   "/v1/placements", lambda n=n: {"graph": TWO_OPS, "hardware": full_mesh(n),
                                                  "options": {"solver": "cpsat", "time_limit_s": 2, "threads": 1}},
                   budget_s=10.0, timeout_s=300.0 if n >= 256 else 120.0)
             for n in (64, 128, 256)]
    cases += [Heavy(f"crossover{n // 1000}k", f"crossover with {n:,} device counts", "/v1/crossover",
                    lambda n=n: _crossover(n), budget_s=10.0, timeout_s=150.0) for n in (200_000, 400_000)]
    cases.append(Heavy("chain100k", f"a 100,000-op chain (limit {max_ops:,} ops): 422", "/v1/placements",
                       lambda: {"graph": chain(100_000), "hardware": FOUR_GPUS}, budget_s=REFUSE_S, must="refuse"))
    cases.append(Heavy(f"simulate{max_ops // 1000}k", f"simulate a {max_ops:,}-op layered graph on 4 GPUs",
                       "/v1/simulations", lambda: _simulation(max_ops), budget_s=15.0))
    cases.append(Heavy(f"place{max_ops // 1000}k-async", f"a {max_ops:,}-op placement, async: 202 at once",
                       "/v1/placements", lambda: {"graph": layered(max_ops), "hardware": FOUR_GPUS,
                                                  "options": {"async": True, "time_limit_s": 5, "threads": 1}},
                       budget_s=10.0, must="accepted"))
    for solver in ("cpsat", "cbc", "highs"):
        cases.append(Heavy(f"limit-{solver}", f"{solver}, 3 s limit, 60-op layered graph on 4 GPUs: within 1 s "
                           "of the limit", "/v1/placements",
                           lambda s=solver: {"graph": layered(60), "hardware": FOUR_GPUS,
                                             "options": {"solver": s, "time_limit_s": 3, "threads": 1}},
                           budget_s=3.0 + 1.0 + 0.5, time_limit_s=3.0, timeout_s=60.0))
    return cases


def encode(case: Heavy) -> bytes:
    return json.dumps(case.build()).encode()


def judge_heavy(case: Heavy, status: int | None, error: str | None, elapsed_s: float) -> list[str]:
    """Why the outcome is wrong (empty: it is right). budget_s includes 0.5 s of HTTP overhead
    for the solver-limit cases (their limit + 1 s is the target)."""
    if error is not None:
        return [f"no answer: {error} after {elapsed_s:.1f} s"]
    assert status is not None
    if status >= 500:
        return [f"server error {status} after {elapsed_s:.1f} s"]
    if 400 <= status < 500:
        if case.must == "accepted" or case.time_limit_s is not None:
            return [f"refused ({status}) a legal request"]
        return [] if elapsed_s <= REFUSE_S else [f"refused only after {elapsed_s:.2f} s (> {REFUSE_S:g} s)"]
    if case.must == "refuse":
        return [f"answered {status}; expected a 4xx (over a documented limit)"]
    if case.must == "accepted" and status != 202:
        return [f"answered {status}; expected 202"]
    if elapsed_s > case.budget_s:
        return [f"answered after {elapsed_s:.1f} s (budget {case.budget_s:g} s)"]
    return []
