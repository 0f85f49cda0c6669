"""Makespans refuted by sub-models of a few whole groups (placer.refutation): never at or
above an optimum, and above the heads and tails where two chains meet on the same devices.

Sub-solves run in deterministic mode (CP-SAT work limits), so what they refute does not
depend on the machine's load."""
from __future__ import annotations

import math
from collections.abc import Callable

import pytest

from placer.bounds import Costs, lower_bound_ms
from placer.budget import Budget
from placer.model import Problem, build_problem
from placer.refutation import RefuteOptions, refute
from placer.schema import parse_graph, parse_hardware
from tests.conftest import fully_connected
from tests.reference import brute_force_makespan
from tests.test_bounds import _mirror_case, _problem, _random_case

TOL = 1e-6
PATIENT = RefuteOptions(step_s=20.0)  # every test to its proof


def _refuted(problem: Problem, incumbent_ms: float) -> float:
    return refute(problem, Costs.of(problem), Budget(1000.0, deterministic=True), 1000.0, lower_bound_ms(problem),
                  incumbent_ms, PATIENT).bound_ms


CASES = [(_random_case, seed) for seed in range(0, 160, 4)] + [(_mirror_case, seed) for seed in range(0, 80, 4)]


@pytest.mark.parametrize(("make", "seed"), CASES, ids=[f"{m.__name__.strip('_')}-{s}" for m, s in CASES])
def test_refutations_never_reach_the_exhaustive_optimum(make: Callable, seed: int) -> None:
    """The bound tests' random instances and forward/backward copies (tests/test_bounds.py),
    searched up to half again the optimum: a makespan the optimum meets is never refuted."""
    g, hw, t = make(seed)
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
    if optimum is None:
        pytest.skip("no placement fits memory")
    value = _refuted(_problem(g, hw), 1.5 * optimum + 1.0)
    assert math.isfinite(value) and value <= optimum + TOL, (value, optimum)


def _two_copies(layers: int = 2, steps: int = 4) -> dict:
    """Layers of steps (1 ms each) and a classifier step (3 ms) after each, as a forward copy
    and a gradient copy at twice the times, joined only by the groups (one per layer, one for
    the classifier): msr-fiddle's form of a recurrent training graph."""
    ops, edges = [], []
    for copy, scale in (("f", 1.0), ("g", 2.0)):
        for layer in range(layers):
            for step in range(steps):
                ops.append({"id": f"{copy}{layer}_{step}", "time_ms": scale, "group": f"layer{layer}"})
                if step < steps - 1:
                    edges.append((f"{copy}{layer}_{step}", f"{copy}{layer}_{step + 1}"))
                edges.append((f"{copy}{layer}_{step}",
                              f"{copy}{layer + 1}_{step}" if layer < layers - 1 else f"{copy}c_{step}"))
        ops += [{"id": f"{copy}c_{step}", "time_ms": 3 * scale, "group": "classifier"} for step in range(steps)]
    return {"format": "placer.graph/v1", "name": "two-copies", "ops": ops,
            "edges": [{"src": a, "dst": b, "bytes": 1_000_000} for a, b in edges]}


def test_refutation_sees_the_transfer_into_the_classifier_that_the_heads_miss() -> None:
    """3 GPUs, 0.5 ms per tensor between them. The classifier's 36 ms need one device from
    its first input on: at best 2 ms of layers and a transfer, so the optimum is 38.5 ms
    (layer 1 beside the classifier would add 12 ms to its device). The heads let layer 1 share
    the classifier's device for free: 38 ms. A sub-model of the three groups refutes what
    lies below 38.5 (to the search's 0.2% resolution), and nothing above it."""
    problem = build_problem(parse_graph(_two_copies()), parse_hardware(fully_connected(3, bandwidth_gb_per_s=2.0)))
    assert lower_bound_ms(problem) == pytest.approx(38.0)
    assert 38.4 <= _refuted(problem, 1.5 * 38.5) <= 38.5 + TOL


def test_a_refutation_without_time_tests_nothing() -> None:
    problem = build_problem(parse_graph(_two_copies()), parse_hardware(fully_connected(3, bandwidth_gb_per_s=2.0)))
    budget = Budget(1000.0, deterministic=True)
    refuted = refute(problem, Costs.of(problem), budget, 0.0, 38.0, 50.0, PATIENT)
    assert (refuted.stopped_by, refuted.tests, refuted.bound_ms, budget.solves) == ("time", 0, 38.0, 0)


def test_the_engine_refutes_in_the_time_the_leftover_cones_leave() -> None:
    """Six layers of 16 steps on 4 GPUs (10 s, deterministic): the monolithic model does not
    close the gap, and the refutation at the end raises the bound above the classifier's
    one-machine bound (150 ms); the stats name it as the tight bound."""
    from placer.engine import PlaceOptions, place

    result = place(parse_graph(_two_copies(layers=6, steps=16)),
                   parse_hardware(fully_connected(4, bandwidth_gb_per_s=2.0)),
                   PlaceOptions(time_limit_s=10, deterministic=True))
    assert result.stats is not None and result.stats.bounds_ms is not None
    assert result.stats.refute_tests and result.stats.refute_refuted
    assert result.stats.tight_bound == "refutation"
    refuted = result.stats.bounds_ms.pop("refutation")
    assert max(result.stats.bounds_ms.values()) == pytest.approx(150.0)
    assert refuted == pytest.approx(result.lower_bound_ms)
    assert 150.0 < refuted <= result.makespan_ms + TOL
