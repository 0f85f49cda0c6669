"""The symmetric relaxation: every device pair as fast as the fastest, a valid bound."""
from __future__ import annotations

import random

import pytest

from benchmarks.graphs import fully_connected_hardware, training_step
from hardware_graphs import load_preset_document
from placer.budget import WORK_PER_SECOND, Budget
from placer.decompose import _ComponentAnswer, _Rounds, _solve_component, decompose, orbit_representatives
from placer.model import build_problem
from placer.relax import symmetric_relaxation
from placer.schema import parse_graph, parse_hardware
from tests.conftest import RecordingBudget, graph
from tests.test_decompose import diamonds

# a 3-GPU line with slow links: transfers of the diamonds' 1 MB tensors take 1-2 ms, as long as ops
LINE = {
    "devices": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
    "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 1.0}, {"a": "b", "b": "c", "bandwidth_gb_per_s": 0.5}],
}


def forks(n: int, seed: int) -> dict:
    """A chain of three-way forks (s -> x0, y0, z0 -> j0 -> x1 ...): three devices pay."""
    rng = random.Random(seed)
    ops, edges, prev = [("s", 1.0)], [], "s"
    for i in range(n):
        ops.append((f"j{i}", 1.0))
        for b in "xyz":
            ops.append((f"{b}{i}", float(rng.randint(3, 5))))
            edges += [(prev, f"{b}{i}", 1_000_000), (f"{b}{i}", f"j{i}", 1_000_000)]
        prev = f"j{i}"
    return graph(ops, edges)


def test_on_a_dgx1_quad_every_pair_gets_the_fastest_delay_and_devices_become_interchangeable() -> None:
    p = build_problem(parse_graph(training_step(diamonds(2, 0))), parse_hardware(load_preset_document("dgx1_v100_quad")))
    relaxed = symmetric_relaxation(p)
    assert relaxed is not None
    assert p.interchangeable_devices != [[0, 1, 2, 3]]
    assert relaxed.interchangeable_devices == [[0, 1, 2, 3]]
    pairs = [(a, b) for a in range(4) for b in range(4) if a != b]
    for e in p.edges:
        fastest = min(p.delay_ms(e, a, b) for a, b in pairs)
        assert {relaxed.delay_ms(e, a, b) for a, b in pairs} == {fastest}
        assert relaxed.delay_ms(e, 1, 1) == 0.0
    # the double NVLinks (50 GB/s) are the fastest: single-link pairs get faster, those keep their delay
    big = next(e for e in p.edges if e.size_bytes > 0)
    assert relaxed.delay_ms(big, 0, 1) < p.delay_ms(big, 0, 1)
    assert relaxed.delay_ms(big, 0, 3) == p.delay_ms(big, 0, 3)


def test_no_relaxation_where_devices_are_already_interchangeable_or_a_group_is_pinned() -> None:
    g = training_step(diamonds(2, 0))
    assert symmetric_relaxation(build_problem(parse_graph(g), parse_hardware(fully_connected_hardware(3)))) is None
    assert symmetric_relaxation(build_problem(parse_graph(g), parse_hardware(LINE))) is not None
    g["ops"][1]["device"] = "a"
    assert symmetric_relaxation(build_problem(parse_graph(g), parse_hardware(LINE))) is None


@pytest.mark.parametrize("seed", range(4))
def test_a_relaxed_component_optimum_never_exceeds_the_true_one(seed: int) -> None:
    """Both proven optimal on each component of a training step on the slow line: the relaxed
    optimum (hence any relaxed bound) is at most the true optimum."""
    p = build_problem(parse_graph(training_step(forks(2, seed))), parse_hardware(LINE))
    relaxed = symmetric_relaxation(p)
    assert relaxed is not None
    dec = decompose(p)
    assert dec is not None
    below = 0
    for comp in dec.components:
        true = _solve_component(p, dec, comp, 10, Budget(10, deterministic=True, threads=1), None,
                                representatives=orbit_representatives(p))
        easy = _solve_component(relaxed, dec, comp, 10, Budget(10, deterministic=True, threads=1), None,
                                representatives=[0])
        assert true.optimal and easy.optimal
        assert easy.bound_ms <= true.objective_ms + 1e-9
        below += easy.objective_ms < true.objective_ms - 1e-9
    assert below > 0  # the line's slow pairs matter: the relaxation is not the same problem


def test_gap_rounds_try_the_relaxation_only_after_the_stitch_and_keep_the_answer() -> None:
    rounds = _Rounds({0: 1.0}, {0: 1.0})
    assert rounds.next(0, 100.0) == (False, 2.0)          # before the stitch: the component itself
    rounds.relaxed_open = {0}
    assert rounds.next(0, 100.0) == (True, 2.0)           # then the relaxation first, each with its own time
    answer = _ComponentAnswer({7: 1}, {(0, 3): 0.5}, 4.0, 6.0, False, "feasible")
    relaxed = _ComponentAnswer({7: 2}, {(0, 3): 0.1}, 5.0, 5.5, False, "feasible")
    kept = rounds.record(0, True, answer, relaxed)
    assert (kept.device_of_group, kept.objective_ms, kept.bound_ms) == ({7: 1}, 6.0, 5.0)
    assert rounds.next(0, 100.0) == (False, 4.0)          # then the component again
    rounds.record(0, False, kept, _ComponentAnswer({}, {}, 0.0, float("inf"), False, "unknown"))
    assert rounds.next(0, 100.0) == (True, 4.0)
    proven = _ComponentAnswer({7: 2}, {}, 6.0, 6.0, True, "optimal")
    closed = rounds.record(0, True, kept, proven)
    assert closed.bound_ms == 6.0 and closed.optimal and closed.device_of_group == {7: 1}
    assert rounds.next(0, 100.0)[0] is False              # a proven relaxation is not solved again
    assert rounds.next(0, 100.0)[0] is False


@pytest.mark.parametrize("workers", [1, 2])
def test_gap_rounds_after_the_stitch_raise_bounds_through_the_relaxation(workers: int) -> None:
    """Components whose bounds are forgotten get their rounds, the relaxation first (in
    processes too): the bounds come back, never above the proven optima, answers kept."""
    from placer.decompose import _close_gaps, _close_gaps_in_pool, _Shared
    from placer.parallel import ProcessPool

    p = build_problem(parse_graph(training_step(forks(2, 1))), parse_hardware(LINE))
    dec = decompose(p)
    assert dec is not None
    representatives = orbit_representatives(p)
    proven = {c: _solve_component(p, dec, comp, 10, Budget(10, deterministic=True, threads=1), None,
                                  representatives=representatives) for c, comp in enumerate(dec.components)}
    assert all(a.optimal for a in proven.values())
    solved = {c: _ComponentAnswer(dict(a.device_of_group), dict(a.local_start_ms), 0.0, a.objective_ms, False,
                                  "feasible") for c, a in proven.items()}
    shared = _Shared(p, dec, representatives, True, 1, 0, symmetric_relaxation(p))
    rounds = _Rounds({c: 0.5 for c in solved}, {c: 0.5 for c in solved}, set(solved))
    budget, messages = Budget(60, deterministic=True, threads=1), []
    copies = [1] * len(solved)
    if workers == 1:
        _close_gaps(shared, budget, solved, copies, rounds, messages.append, 20.0)
    else:
        pool = ProcessPool(workers)
        try:
            _close_gaps_in_pool(pool, shared, budget, solved, copies, rounds, messages.append, 20.0)
        finally:
            pool.close()
    assert messages and (workers > 1 or "relaxed to equal links" in messages[0])
    assert rounds.relaxed_done or rounds.relaxed_open < set(solved)   # a relaxed round was recorded
    for c, answer in solved.items():
        assert 0.0 < answer.bound_ms <= proven[c].objective_ms + 1e-9
        assert answer.objective_ms <= proven[c].objective_ms + 1e-9


def test_a_relaxation_round_tries_the_default_search_then_the_bound_search() -> None:
    """A relaxed round is kept only for its bound: after a quarter of its time with CP-SAT's
    default search (which proves small components at once) it goes on with the lower-bound
    tree search, which proves far more on large ones (GPT per head on the DGX-1: 10.70% ->
    2.27%, benchmarks/reports/2026-12-03-bound-search). A component's own rounds keep the
    default search: the stitch uses their answers."""
    from benchmarks.graphs import gpt_per_head
    from placer.decompose import _Shared, _solve_round

    p = build_problem(parse_graph(gpt_per_head(layers=1, heads=2)), parse_hardware(load_preset_document("dgx1_v100")))
    dec = decompose(p)
    assert dec is not None
    shared = _Shared(p, dec, orbit_representatives(p), True, 1, 0, symmetric_relaxation(p))
    c = max(range(len(dec.components)), key=lambda c: sum(len(dec.segments[j]) for j in dec.components[c]))
    relaxed, own = RecordingBudget(60, threads=1), RecordingBudget(60, threads=1)
    answer = _solve_round(shared, c, True, 1.0, relaxed, None)
    quick_proved = relaxed.runs[0].status.value == "optimal"
    searches = [call.get("bound_search", False) for call in relaxed.calls]
    assert searches == ([False] if quick_proved else [False, True])
    # within the round's 1 s of work (CP-SAT stops a few percent past a deterministic limit)
    assert answer.bound_ms > 0 and relaxed.work <= 1.25 * WORK_PER_SECOND * 1.0
    _solve_round(shared, c, False, 1.0, own, None)
    assert [call.get("bound_search", False) for call in own.calls] == [False]


@pytest.mark.parametrize("capacity, relaxed_first", [(None, False), (10_000, True)])
def test_where_memory_binds_the_relaxation_rounds_come_before_the_stitch(capacity: int | None, relaxed_first: bool,
                                                                         monkeypatch) -> None:  # noqa: ANN001
    """The stitch of a memory-bound graph re-fits components for as long as the time lasts
    (per-head BERT-12 on a tight DGX-1: all of it, and the relaxation that proves 33.75 ms
    instead of 28.64 never ran): there the relaxation's rounds open before the stitch."""
    import placer.decompose as decompose_module
    from placer.heuristics import heft

    doc = training_step(forks(3, 1))
    for op in doc["ops"]:
        op["memory_bytes"] = 1_000
    hw = {**LINE, "devices": [{**d, "memory_bytes": capacity} if capacity else d for d in LINE["devices"]]}
    p = build_problem(parse_graph(doc), parse_hardware(hw))
    assert p.memory_exceeds_a_device() is relaxed_first  # 26 ops of 1 kB, 10 kB per device
    open_at_each_call: list[set[int]] = []
    close_gaps = decompose_module._close_gaps

    def recording(shared, budget, solved, copies, rounds, step, until):  # noqa: ANN001, ANN202
        open_at_each_call.append(set(rounds.relaxed_open))
        return close_gaps(shared, budget, solved, copies, rounds, step, until)

    monkeypatch.setattr(decompose_module, "_close_gaps", recording)
    dec = decompose(p)
    assert dec is not None
    decompose_module.solve_decomposed(p, dec, Budget(10, deterministic=True, threads=1), 10, heft(p).solution)
    before_stitch, after_stitch = open_at_each_call
    assert bool(before_stitch) is relaxed_first
    assert after_stitch == set(range(len(dec.components)))
