"""The best-connected half of a machine, and a decomposition's first solves that start there."""
from __future__ import annotations

import itertools

import pytest

from benchmarks.graphs import fully_connected_hardware, layered, training_step
from hardware_graphs import load_preset_document
from placer.budget import Budget
from placer.decompose import _solve_component, decompose, orbit_representatives, solve_decomposed
from placer.engine import PlaceOptions, place
from placer.model import Problem, build_problem
from placer.schema import parse_graph, parse_hardware
from placer.submachine import sub_machine
from placer.validate import check_result
from tests.test_decompose import diamonds


def _problem(graph_doc: dict, hardware_doc: dict) -> Problem:
    return build_problem(parse_graph(graph_doc), parse_hardware(hardware_doc))


def test_the_half_of_a_dgx1_holding_the_anchor_whose_pairs_are_fastest_in_all() -> None:
    p = _problem(diamonds(3, 0), load_preset_document("dgx1_v100"))
    size = 1_000_000  # every edge of the diamonds: the median

    def cost(half: tuple[int, ...]) -> float:
        return sum(p.router.delay_ms(size, p.devices[a], p.devices[b]) for a, b in itertools.combinations(half, 2))

    for anchor in (0, 5):
        half = sub_machine(p, anchor)
        assert half is not None and len(half) == 4 and anchor in half
        best = min(cost(h) for h in itertools.combinations(range(8), 4) if anchor in h)
        assert cost(tuple(half)) == pytest.approx(best)


def test_no_sub_machine_on_small_symmetric_or_pinned_machines() -> None:
    assert sub_machine(_problem(diamonds(3, 0), load_preset_document("dgx1_v100_quad")), 0) is None
    assert sub_machine(_problem(diamonds(3, 0), fully_connected_hardware(8)), 0) is None  # interchangeable
    pinned = diamonds(3, 0)
    pinned["ops"][1]["device"] = "gpu6"
    assert sub_machine(_problem(pinned, load_preset_document("dgx1_v100")), 0) is None


def test_a_component_restricted_to_the_sub_machine_runs_there_and_proves_nothing() -> None:
    p = _problem(training_step(diamonds(3, 1)), load_preset_document("dgx1_v100"))
    dec = decompose(p)
    assert dec is not None
    half = sub_machine(p, 0)
    assert half is not None
    comp = max(dec.components, key=lambda c: sum(len(dec.segments[j]) for j in c))
    answer = _solve_component(p, dec, comp, 5, Budget(5, deterministic=True, threads=1), None,
                              representatives=orbit_representatives(p), devices=half)
    assert answer.device_of_group and set(answer.device_of_group.values()) <= set(half)
    assert answer.bound_ms == 0.0 and not answer.optimal


def test_decomposition_on_a_dgx1_stays_a_valid_bound_and_answer() -> None:
    """The first solves start on the sub-machine: the bound still holds (below the engine's
    answer, which the validator accepts) and the stitched answer is valid."""
    g, hw = parse_graph(training_step(layered(40, seed=2, ccr=1.0))), parse_hardware(load_preset_document("dgx1_v100"))
    p = build_problem(g, hw)
    dec = decompose(p)
    assert dec is not None and sub_machine(p, orbit_representatives(p)[0]) is not None
    answer = solve_decomposed(p, dec, Budget(6, deterministic=True, threads=1), 6, None)
    result = place(g, hw, PlaceOptions(time_limit_s=6, deterministic=True))
    assert check_result(g, hw, result) == []
    assert answer.bound_ms <= result.makespan_ms + 1e-9
    assert answer.schedule is not None and answer.schedule.makespan_ms >= answer.bound_ms - 1e-9
