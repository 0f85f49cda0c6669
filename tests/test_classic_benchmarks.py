"""Classic task scheduling with communication delays (P|prec,c_ij|Cmax), with known optima.

A classic instance -- task weights w, edge costs c, m identical fully connected processors, a cost
only between processors, no duplication -- is exactly a placer problem: op `time_ms = w`, edge
`bytes = c * 1e6` on m devices joined pairwise by 1 GB/s links without latency (c ms per edge).
The instances, their sources and how far each optimum can be trusted are in
`tests/data/classic/*.json` ("source") and `docs/classic_benchmarks.md`.

Every optimum is checked three ways: against its source, by the independent branch-and-bound
below (which shares no code with placer), and by our back ends, whose answers must also pass
`../shared/tools/verify_result.py --optimum`.
"""
from __future__ import annotations

import json
import random
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from placer.engine import PlaceOptions, place
from placer.schema import ResultSpec, parse_graph, parse_hardware
from tests.conftest import EXACT, VERIFY, fully_connected
from tests.reference import brute_force_makespan

DATA = Path(__file__).resolve().parent / "data" / "classic"
BYTES_PER_COST_UNIT = 1_000_000  # over a 1 GB/s link, 1e6 bytes take exactly 1 ms
TOL_MS = 1e-6

# The MILP back ends (shortest routing, threads=1, 2-core machine; measured, see
# docs/classic_benchmarks.md). Proves optimality in a few seconds: run by default. Within 60 s: slow.
# Not within 60 s: only checked, with a 10 s limit and as slow tests, never to beat the optimum.
MILP_SLOW = {
    "cbc": {"outtree_balanced_10_ccr_1.97_p2", "outtree_balanced_10_ccr_1.97_p4", "intree_balanced_10_ccr_2.02_p4"},
    "highs": {"fork_join_10_ccr_1.01_p2", "fork_join_10_ccr_1.01_p4", "random_10_density_0.60_ccr_1.02_p2"},
}
MILP_UNPROVEN = {
    "cbc": {"fork_join_10_ccr_1.01_p2", "fork_join_10_ccr_1.01_p4", "nodes_11_outtree_p2",
            "random_10_density_0.60_ccr_1.02_p2", "outtree_unbalanced_21_ccr_0.99_p4"},
    "highs": {"nodes_11_outtree_p2", "outtree_unbalanced_21_ccr_0.99_p4"},
}


@dataclass(frozen=True)
class Instance:
    """One classic instance as stored in tests/data/classic."""

    name: str
    processors: int
    optimum: float
    graph: dict[str, Any]
    source: dict[str, str]

    @property
    def hardware(self) -> dict[str, Any]:
        return fully_connected(self.processors, bandwidth_gb_per_s=1.0, latency_us=0.0)

    def weights_and_costs(self) -> tuple[list[float], list[tuple[int, int, float]]]:
        """The classic form (w, [(u, v, c)]) read back from the placer documents."""
        index = {op["id"]: k for k, op in enumerate(self.graph["ops"])}
        weights = [float(op["time_ms"]) for op in self.graph["ops"]]
        costs = [(index[e["src"]], index[e["dst"]], e["bytes"] / BYTES_PER_COST_UNIT) for e in self.graph["edges"]]
        return weights, costs


def _load(path: Path) -> Instance:
    doc = json.loads(path.read_text())
    return Instance(path.stem, doc["processors"], float(doc["optimum"]), doc["graph"], doc["source"])


INSTANCES = [_load(p) for p in sorted(DATA.glob("*.json"))]
IDS = [i.name for i in INSTANCES]


def _milp_cases(proven: bool) -> list[Any]:
    """(solver, instance) pairs whose solver proves (or does not prove) the optimum within 60 s."""
    out = []
    for solver in ("cbc", "highs"):
        for inst in INSTANCES:
            if (inst.name in MILP_UNPROVEN[solver]) == proven:
                continue
            marks = [pytest.mark.slow] if not proven or inst.name in MILP_SLOW[solver] else []
            if solver not in EXACT:
                marks.append(pytest.mark.skip(reason=f"{solver} is not installed"))
            out.append(pytest.param(solver, inst, id=f"{solver}-{inst.name}", marks=marks))
    return out


def solve(inst: Instance, solver: str, limit_s: float) -> ResultSpec:
    opts = PlaceOptions(solver=solver, routing="shortest", time_limit_s=limit_s, threads=1, seed=0,
                        relative_gap=0.0)
    return place(parse_graph(inst.graph), parse_hardware(inst.hardware), opts)


def verify(tmp_path: Path, inst: Instance, result: ResultSpec) -> None:
    """The project-independent checker, with the known optimum."""
    files = []
    for name, doc in (("graph", inst.graph), ("hardware", inst.hardware), ("result", result.model_dump(mode="json"))):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(doc))
        files.append(str(path))
    done = subprocess.run([sys.executable, str(VERIFY), *files, "--optimum", repr(inst.optimum)],
                          check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


# --- an independent exact solver --------------------------------------------------------------

def branch_and_bound_optimum(
    weights: list[float], costs: list[tuple[int, int, float]], m: int, upper_bound: float | None = None,
) -> float:
    """Optimal schedule length of P|prec,c_ij|Cmax by depth-first branch and bound.

    With `upper_bound`, only schedules strictly shorter than it are sought, and `upper_bound` is
    returned when none exists: a proof that nothing beats it (much faster than finding the optimum).

    Exhaustive list scheduling (Sinnen's ELS state space): repeatedly append a ready task to the end
    of a processor at its earliest start. Sorting any semi-active schedule by (start, task) and
    replaying it this way reproduces it, so searching only sequences whose (start, task) keys
    increase is complete and visits each schedule once. Empty processors are interchangeable: only
    the first is tried. Bounds: a task's start plus its computation bottom level, and the load
    bound (sum over processors of max(ready, last start) + remaining work) / m.
    """
    n = len(weights)
    preds: list[list[tuple[int, float]]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for u, v, c in costs:
        preds[v].append((u, c))
        succs[u].append(v)
    bottom = [0.0] * n
    for t in reversed(_topological_order(n, succs)):
        bottom[t] = weights[t] + max((bottom[s] for s in succs[t]), default=0.0)

    finish: list[float | None] = [None] * n
    proc = [-1] * n
    ready = [0.0] * m
    waiting = [len(p) for p in preds]
    best = [float(sum(weights)) if upper_bound is None else upper_bound]  # sum: all on one processor

    def search(placed: int, last_start: float, last_task: int, remaining: float) -> None:
        if placed == n:
            best[0] = min(best[0], max(ready))
            return
        if (sum(max(r, last_start) for r in ready) + remaining) / m >= best[0]:
            return
        used = set(proc)
        first_empty = next((p for p in range(m) if p not in used), None)
        for t in range(n):
            if finish[t] is not None or waiting[t]:
                continue
            for p in range(m):
                if p not in used and p != first_empty:
                    continue
                start = ready[p]
                for u, c in preds[t]:
                    start = max(start, finish[u] + (0.0 if proc[u] == p else c))
                if (start, t) <= (last_start, last_task) or start + bottom[t] >= best[0]:
                    continue
                finish[t], proc[t], before = start + weights[t], p, ready[p]
                ready[p] = finish[t]
                for s in succs[t]:
                    waiting[s] -= 1
                search(placed + 1, start, t, remaining - weights[t])
                for s in succs[t]:
                    waiting[s] += 1
                finish[t], proc[t], ready[p] = None, -1, before

    search(0, -1.0, -1, float(sum(weights)))
    return best[0]


def _topological_order(n: int, succs: list[list[int]]) -> list[int]:
    indegree = [0] * n
    for out in succs:
        for v in out:
            indegree[v] += 1
    order, stack = [], [t for t in range(n) if indegree[t] == 0]
    while stack:
        t = stack.pop()
        order.append(t)
        for v in succs[t]:
            indegree[v] -= 1
            if indegree[v] == 0:
                stack.append(v)
    assert len(order) == n, "not a DAG"
    return order


# --- the data files ---------------------------------------------------------------------------

def test_there_are_classic_instances() -> None:
    assert len(INSTANCES) >= 20
    assert {i.processors for i in INSTANCES} == {2, 4}


@pytest.mark.parametrize("inst", INSTANCES, ids=IDS)
def test_data_file_names_its_source_and_parses(inst: Instance) -> None:
    for key in ("collection", "graphs_from", "optimum_from", "model", "dataset_name"):
        assert inst.source.get(key), f"{inst.name}: source.{key} is missing"
    g = parse_graph(inst.graph)
    assert all(op.time_ms and op.time_ms > 0 for op in g.ops)
    assert all(e.bytes % BYTES_PER_COST_UNIT == 0 and e.bytes > 0 for e in g.edges)
    weights, _ = inst.weights_and_costs()
    assert 0 < inst.optimum <= sum(weights)


# --- the optimum, judged independently of placer -----------------------------------------------

SMALL = [i for i in INSTANCES if len(i.graph["ops"]) <= 11]
LARGE = [i for i in INSTANCES if len(i.graph["ops"]) > 11]


@pytest.mark.parametrize("inst", SMALL, ids=lambda i: i.name)
def test_independent_branch_and_bound_finds_the_optimum(inst: Instance) -> None:
    weights, costs = inst.weights_and_costs()
    assert branch_and_bound_optimum(weights, costs, inst.processors) == pytest.approx(inst.optimum, abs=TOL_MS)


@pytest.mark.slow
@pytest.mark.parametrize("inst", LARGE, ids=lambda i: i.name)
def test_independent_branch_and_bound_finds_the_optimum_below_a_cap(inst: Instance) -> None:
    """Too large to search from scratch (minutes); capped just above the optimum it takes about a minute.

    Searching for anything shorter than optimum + 1 finds the optimum and proves nothing beats it.
    """
    weights, costs = inst.weights_and_costs()
    cap = inst.optimum + 1.0
    assert branch_and_bound_optimum(weights, costs, inst.processors, upper_bound=cap) == pytest.approx(
        inst.optimum, abs=TOL_MS)


@pytest.mark.parametrize("seed", range(12))
def test_branch_and_bound_agrees_with_exhaustive_enumeration(seed: int) -> None:
    """The pruning must never cut the optimum: compare with every placement and order."""
    rng = random.Random(seed)
    n, m = rng.choice([(5, 2), (6, 2), (5, 3)])
    weights = [float(rng.randint(1, 9)) for _ in range(n)]
    costs = [(u, v, float(rng.randint(0, 12))) for u in range(n) for v in range(u + 1, n) if rng.random() < 0.4]
    expected = brute_force_makespan(
        [[w] * m for w in weights], costs, lambda c, a, b: c,
    )
    assert expected is not None
    assert branch_and_bound_optimum(weights, costs, m) == pytest.approx(expected, abs=TOL_MS)


def test_branch_and_bound_on_a_hand_solved_fork() -> None:
    # a (2) feeds b and c (4 each), a transfer costs 1: a, b together and c elsewhere from 3 -> 7.
    assert branch_and_bound_optimum([2.0, 4.0, 4.0], [(0, 1, 1.0), (0, 2, 1.0)], 2) == 7.0
    # a transfer of 5 makes splitting worse than running all three in a row (10).
    assert branch_and_bound_optimum([2.0, 4.0, 4.0], [(0, 1, 5.0), (0, 2, 5.0)], 2) == 10.0


# --- our back ends ---------------------------------------------------------------------------

@pytest.mark.parametrize("inst", INSTANCES, ids=IDS)
def test_cpsat_proves_the_known_optimum(inst: Instance, tmp_path: Path) -> None:
    r = solve(inst, "cpsat", 30.0)
    assert r.status == "optimal", f"{inst.name}: {r.status}, {r.makespan_ms} ms, bound {r.lower_bound_ms}"
    assert r.makespan_ms == pytest.approx(inst.optimum, abs=TOL_MS)
    assert r.lower_bound_ms == pytest.approx(inst.optimum, abs=TOL_MS)
    verify(tmp_path, inst, r)


@pytest.mark.parametrize("solver,inst", _milp_cases(proven=True))
def test_milp_proves_the_known_optimum(solver: str, inst: Instance, tmp_path: Path) -> None:
    r = solve(inst, solver, 60.0)
    assert r.status == "optimal", f"{inst.name}: {r.status}, {r.makespan_ms} ms, bound {r.lower_bound_ms}"
    assert r.makespan_ms == pytest.approx(inst.optimum, abs=TOL_MS)
    assert r.lower_bound_ms == pytest.approx(inst.optimum, abs=TOL_MS)
    verify(tmp_path, inst, r)


@pytest.mark.parametrize("solver,inst", _milp_cases(proven=False))
def test_milp_without_a_proof_never_beats_the_optimum(solver: str, inst: Instance, tmp_path: Path) -> None:
    r = solve(inst, solver, 10.0)
    assert r.status in ("optimal", "feasible")
    assert r.makespan_ms >= inst.optimum - TOL_MS
    assert r.lower_bound_ms <= inst.optimum + TOL_MS
    verify(tmp_path, inst, r)
