"""Shared fixtures and options.

`--runslow` runs the larger instances. With PLACER_REQUIRE_BACKENDS=cbc,cpsat,highs (set
by .ci/run) a missing back end fails the session instead of skipping silently, and with
PLACER_REQUIRE_RAY=1 (also .ci/run) so does a missing Ray: the cluster tests (`ray_cluster`,
a real two-node Ray cluster on loopback) would otherwise skip. Hypothesis
runs derandomized (profile "placer"), so every run draws the same examples.
"""
from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings

from placer import bounds
from placer.budget import Budget
from solvers import available_solvers

# Property tests draw the same examples on every run: a failure reproduces, and a pass
# means the same thing twice. print_blob gives the @reproduce_failure line on a failure.
settings.register_profile("placer", derandomize=True, database=None, deadline=None, print_blob=True)
settings.load_profile("placer")

# Strict mode: a candidate that any engine strategy produces and the engine must reject
# (invalid placement, order, memory) fails the test instead of being discarded quietly.
os.environ.setdefault("PLACER_STRICT", "1")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", default=False, help="run tests marked slow")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--runslow"):
        return
    skip = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip)


def pytest_sessionstart(session: pytest.Session) -> None:
    required = [b for b in os.environ.get("PLACER_REQUIRE_BACKENDS", "").split(",") if b]
    have = available_solvers()
    missing = [b for b in required if not have.get(b)]
    if missing:
        raise pytest.UsageError(f"required solver back ends are missing: {', '.join(missing)}")
    if _ray_required() and importlib.util.find_spec("ray") is None:
        raise pytest.UsageError("PLACER_REQUIRE_RAY=1 but Ray is not installed (pip install -e '.[ray]')")


def _ray_required() -> bool:
    return os.environ.get("PLACER_REQUIRE_RAY", "") not in ("", "0")


def start_ray_cluster(num_cpus: list[int]) -> Any:
    """A real Ray cluster on loopback (benchmarks.ray_cluster), or skip the test when Ray is
    missing and not required."""
    if importlib.util.find_spec("ray") is None:
        if _ray_required():
            pytest.fail("PLACER_REQUIRE_RAY=1 but Ray is not installed")
        pytest.skip("Ray is not installed (pip install -e '.[ray]')")
    from benchmarks.ray_cluster import LocalRayCluster

    return LocalRayCluster().start(num_cpus)


def stop_ray_cluster(cluster: Any) -> None:
    """Stop it and fail when any of its processes is left."""
    left = cluster.stop()
    assert not left, f"processes of the Ray cluster were left running: {left}"


@pytest.fixture
def without_side_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bounds without the side ops of the path blocks and the paired chains
    (tests/test_bounds.py): they prove the small graphs of the cone and ancestral-load tests
    by themselves, so those tests turn them off to see what the heads' raise adds."""
    monkeypatch.setattr(bounds, "_MAX_SIDE_CHAIN", 0)


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """Two Ray nodes of one CPU each (the head on 127.0.0.2, the other on 127.0.0.3), shared by
    the tests that do not break it."""
    cluster = start_ray_cluster([1, 1])
    yield cluster
    stop_ray_cluster(cluster)


# The team's independent result checker (standard library only). The copy in tests/tools
# keeps a bare checkout testable; the shared original, when it sits beside the project, wins.
_SHARED_VERIFY = Path(__file__).resolve().parents[2] / "shared" / "tools" / "verify_result.py"
VERIFY = _SHARED_VERIFY if _SHARED_VERIFY.exists() else Path(__file__).parent / "tools" / "verify_result.py"

EXACT = [name for name, ok in available_solvers().items() if ok]


def fully_connected(n: int, bandwidth_gb_per_s: float = 1.0, latency_us: float = 0.0, **device: Any) -> dict:
    """n identical devices, one link per pair."""
    return {
        "format": "placer.hardware/v1",
        "name": f"{n}-fully-connected",
        "devices": [{"id": f"gpu{i}", **device} for i in range(n)],
        "links": [
            {"a": f"gpu{i}", "b": f"gpu{j}", "bandwidth_gb_per_s": bandwidth_gb_per_s, "latency_us": latency_us}
            for i in range(n) for j in range(i + 1, n)
        ],
    }


def graph(ops: list[tuple], edges: list[tuple] = (), **extra: Any) -> dict:
    """A placer.graph/v1 document from (id, time_ms[, memory_bytes]) and (src, dst, bytes) tuples."""
    return {
        "format": "placer.graph/v1",
        "name": extra.pop("name", "test"),
        "ops": [{"id": o[0], "time_ms": o[1], "memory_bytes": o[2] if len(o) > 2 else 0} for o in ops],
        "edges": [{"src": s, "dst": d, "bytes": b} for s, d, b in edges],
    }


class RecordingBudget(Budget):
    """A real deterministic budget that keeps the options of every CP-SAT call."""

    def __init__(self, limit_s: float, threads: int = 2) -> None:
        super().__init__(limit_s, deterministic=True, threads=threads)
        self.calls: list[dict] = []
        self.runs: list[Any] = []   # solvers.base.SolverRun of each call

    def solve_cpsat(self, model: Any, seconds: float, **options: Any) -> Any:
        self.calls.append(options)
        run, solver = super().solve_cpsat(model, seconds, **options)
        self.runs.append(run)
        return run, solver
