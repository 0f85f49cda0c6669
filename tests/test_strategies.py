"""The engine's strategies on their own: each answer valid, never worse than where it
started, and every bound below the exhaustive optimum (fixed seeds, no timing)."""
from __future__ import annotations

import itertools
import math
import random

import pytest

from benchmarks.graphs import fully_connected_hardware, layered, training_step
from placer.bounds import bounds_and_switch_cover, lower_bound_ms
from placer.budget import Budget
from placer.formulations.cpsat_model import build_cpsat
from placer.heuristics import critical_path as cpop
from placer.heuristics import heft, heft_by_paths, justify, resequence, stages, switch_cover_start
from placer.local_search import improve_by_moves
from placer.model import build_problem
from placer.neighbourhood import critical_path, improve
from placer.schedule import Schedule, Solution, retime, solution_from_starts
from placer.schema import parse_graph, parse_hardware
from tests.conftest import fully_connected, graph
from tests.reference import brute_force_makespan
from tests.test_bounds import _switch_case


def _training(seed: int, n: int = 40, devices: int = 4):
    g = parse_graph(training_step(layered(n, seed=seed)))
    return build_problem(g, parse_hardware(fully_connected_hardware(devices)))


def _valid(problem, schedule: Schedule) -> None:
    """Re-timing the schedule's own placement and order reproduces it exactly."""
    again = retime(problem, schedule.solution)
    assert again.makespan_ms == pytest.approx(schedule.makespan_ms)
    for g, ops in enumerate(problem.groups):
        assert len({schedule.solution.device[k] for k in ops}) == 1


def _random_placement(problem, rng: random.Random) -> list[int]:
    """Each group on a random device (memory is not checked: _training has none)."""
    groups = [rng.randrange(problem.n_devices) for _ in problem.groups]
    return [groups[problem.group[k]] for k in range(problem.n_ops)]


def _two_chains(n: int, seed: int) -> dict:
    """msr-fiddle's form of a training graph: forward ops f_i and gradient ops b_i (twice as
    long) as two chains both in layer order, each layer's pair in one group, nothing else
    joining them."""
    rng = random.Random(seed)
    ops, edges = [], []
    for i in range(n):
        f = round(rng.uniform(0.5, 1.5), 3)
        ops += [{"id": f"f{i}", "time_ms": f, "group": f"L{i}"},
                {"id": f"b{i}", "time_ms": round(2 * f, 3), "group": f"L{i}"}]
        if i:
            edges += [{"src": f"{c}{i - 1}", "dst": f"{c}{i}", "bytes": 2_500_000} for c in "fb"]
    return {"name": f"two-chains-{n}-{seed}", "ops": ops, "edges": edges}


def _layer_pairs(times: dict[str, float], edges: list[tuple[str, str, int]]):
    """Ops named f<i> and b<i> (layer i's forward op and gradient, in group L<i>) on two GPUs
    joined by a 1 GB/s link."""
    doc = {"name": "two-chains", "ops": [{"id": k, "time_ms": t, "group": f"L{k[1]}"} for k, t in times.items()],
           "edges": [{"src": s, "dst": d, "bytes": b} for s, d, b in edges]}
    return build_problem(parse_graph(doc), parse_hardware(fully_connected(2)))


def _optimum(p) -> float:
    """The brute-force optimum of a `_layer_pairs` problem (1 GB/s: bytes / 1e6 ms)."""
    return brute_force_makespan(p.time_ms, [(e.src, e.dst, e.size_bytes) for e in p.edges],
                                lambda size, a, b: size / 1e6, groups=p.groups)


def test_blocks_taken_in_turn_let_the_forward_chain_run_ahead_of_the_gradients() -> None:
    # the optimum: the forward chain a block ahead of the gradient chain, blocks growing as
    # the gradients' lead allows, the devices in turn; it meets the paired-chains bound
    p = build_problem(parse_graph(_two_chains(24, seed=1)), parse_hardware(fully_connected_hardware(4)))
    bound = lower_bound_ms(p)
    found = stages(p, math.inf, 60)
    assert found is not None
    _valid(p, found)
    assert found.makespan_ms == pytest.approx(bound, rel=1e-9)
    baseline = heft(p)
    assert baseline is not None and baseline.makespan_ms > 1.005 * bound


def test_cpsat_stops_once_the_runs_own_bound_proves_its_solution(monkeypatch: pytest.MonkeyPatch) -> None:
    # CP-SAT's model here knows no lower bound (as when rounded durations hide it): the run's
    # paired-chains bound proves its first optimal solution, and the search stops there
    import placer.formulations.cpsat_model as cpsat_model
    from placer.engine import PlaceOptions, Strategy, _Run, _solve_cpsat
    from solvers import SolveStatus

    build = cpsat_model.build_cpsat
    monkeypatch.setattr(cpsat_model, "build_cpsat", lambda q, hint, bound, **kw: build(q, hint, 0.0, **kw))
    g, hw = parse_graph(_two_chains(24, seed=0)), parse_hardware(fully_connected_hardware(4))
    run = _Run(g, hw, PlaceOptions(time_limit_s=20, deterministic=True), None, Strategy())
    run.offer(heft(run.problem), "heft")
    assert run.bound_source == "paired_chains" and run.best.makespan_ms > run.bound_ms
    solved = _solve_cpsat(run)
    assert solved.status is SolveStatus.OPTIMAL and solved.work < 1.0  # of 8 work units allowed
    assert run.best.makespan_ms == pytest.approx(run.bound_ms, rel=1e-9)
    assert run.stats.proof == "a cpsat solution meets the paired_chains bound"


@pytest.mark.parametrize("seed", range(3))
def test_the_staged_heuristic_is_valid_and_deterministic(seed: int) -> None:
    p = _training(seed)
    first = stages(p, math.inf, 60)
    second = stages(p, math.inf, 60)
    assert first is not None and second is not None
    _valid(p, first)
    assert first.solution.device == second.solution.device
    assert first.makespan_ms >= lower_bound_ms(p) - 1e-9


def test_the_switch_cover_start_keeps_apart_the_groups_the_cover_keeps_apart() -> None:
    """Path f0 -> f1 -> s -> b0 (1, 2, 3, 1 ms), groups {f0, s, b0} and {f1, b1}; b1 (2 ms)
    runs after f1 and before b0; 1 ms transfers except f1 -> s (nothing); 2 devices.

    On one device b1 runs inside the path: 9. The cover prices the switch between the two
    groups at 1 ms (f0 -> f1) against b1's 2 ms and keeps them apart: 8, the optimum, where
    HEFT and CPOP give 9."""
    ops = [("f0", 1.0), ("f1", 2.0), ("s", 3.0), ("b1", 2.0), ("b0", 1.0)]
    edges = [("f0", "f1", 1_000_000), ("f1", "b1", 1_000_000), ("b1", "b0", 1_000_000), ("f1", "s", 0),
             ("s", "b0", 1_000_000)]
    g = graph(ops, edges)
    for op in g["ops"]:
        op["group"] = "l1" if op["id"] in ("f1", "b1") else "l0"
    p = build_problem(parse_graph(g), parse_hardware(fully_connected(2)))
    cover = bounds_and_switch_cover(p)[1]
    assert cover.apart == [(0, 1)] and cover.bound_ms == pytest.approx(8.0)
    start = switch_cover_start(p, cover)
    _valid(p, start)
    assert start.solution.device[0] != start.solution.device[1]
    assert start.makespan_ms == pytest.approx(8.0)
    assert heft(p).makespan_ms == pytest.approx(9.0) and cpop(p).makespan_ms == pytest.approx(9.0)
    assert brute_force_makespan([[t, t] for _, t in ops], [(0, 1, 1e6), (1, 3, 1e6), (3, 4, 1e6), (1, 2, 0), (2, 4, 1e6)],
                                lambda size, a, b: size / 1e6, groups=[[0, 2, 4], [1, 3]]) == pytest.approx(8.0)


@pytest.mark.parametrize("seed", range(40))
def test_the_switch_cover_start_is_valid_and_never_below_the_optimum(seed: int) -> None:
    g, hw, t = _switch_case(seed)
    p = build_problem(parse_graph(g), parse_hardware(hw))
    cover = bounds_and_switch_cover(p)[1]
    start = switch_cover_start(p, cover)
    if start is None:  # nothing apart, or only pairs inside groups the cover keeps together
        return
    assert cover.apart
    _valid(p, start)
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], groups=t["groups"])
    assert start.makespan_ms >= optimum - 1e-9


@pytest.mark.parametrize("seed", range(3))
def test_group_moves_never_make_the_incumbent_worse(seed: int) -> None:
    p = _training(seed)
    start = heft(p)
    better, counts = improve_by_moves(p, start, math.inf, 200, seed)
    _valid(p, better)
    assert better.makespan_ms <= start.makespan_ms + 1e-9
    assert counts["evaluations"] <= 200
    again, _ = improve_by_moves(p, start, math.inf, 200, seed)
    assert again.solution.device == better.solution.device


def test_resequencing_a_placement_runs_the_longest_tail_first() -> None:
    # a (1 ms) on gpu0 feeds b (5 ms) on gpu1, c (5 ms) on gpu0 is independent: c before a
    # takes 11 ms, a before c 6 ms (the optimum for this placement)
    from tests.conftest import fully_connected, graph

    doc = graph([("a", 1.0), ("b", 5.0), ("c", 5.0)], [("a", "b", 0)])
    p = build_problem(parse_graph(doc), parse_hardware(fully_connected(2)))
    device = [0, 1, 0]
    slow = retime(p, Solution(device=device, order=[[2, 0], [1]]))
    assert slow.makespan_ms == pytest.approx(11.0)
    fast = resequence(p, device)
    assert fast is not None and fast.solution.device == device
    assert fast.makespan_ms == pytest.approx(6.0)


def test_resequencing_two_chains_joined_only_by_groups_runs_the_longer_path_first() -> None:
    # msr-fiddle's form: forward f0 -> f1 -> f2 and gradients b0 -> b1 -> b2 (twice as long),
    # layer i's pair in group L{i}; L0 on gpu1, L1 and L2 on gpu0, each edge 0.1 ms apart.
    # By tails, f1 (tail 1.1 ms, ready at 4.6) goes before b2 (tail 1.0, ready at 4.3) and
    # gpu0 idles: 6.7 ms. By the path through each op, b2 (4.3 + 1.0) outranks f1
    # (1.6 + 1.1): gpu0 runs b1, b2, f1, f2 back to back from 3.1 ms, 6.4 ms, the optimum
    p = _layer_pairs({"f0": 1.5, "b0": 3.0, "f1": 0.6, "b1": 1.2, "f2": 0.5, "b2": 1.0},
                     [(f"{c}{i}", f"{c}{i + 1}", 100_000) for c in "fb" for i in range(2)])
    device = [1 if p.ops[k][1] == "0" else 0 for k in range(p.n_ops)]
    on = [[k for k in range(p.n_ops) if device[k] == d] for d in range(2)]
    best = math.inf
    for orders in itertools.product(*(itertools.permutations(ops) for ops in on)):
        if not any(p.descendants[b] >> a & 1 for seq in orders for a, b in itertools.combinations(seq, 2)):
            best = min(best, retime(p, Solution(device=device, order=[list(seq) for seq in orders])).makespan_ms)
    assert best == pytest.approx(6.4)
    found = resequence(p, device)
    assert found is not None and found.solution.device == device
    _valid(p, found)
    assert found.makespan_ms == pytest.approx(6.4)


def test_heft_by_paths_lets_a_chains_next_op_go_before_the_other_chains_first() -> None:
    # groups L0 = {f0 1.5 ms, b0 2.8 ms} and L1 = {f1 0.3, b1 0.2}; f0 -> f1 is 2 ms apart,
    # b0 -> b1 0.5 ms. HEFT ranks b0 (2.8 + 0.5 + 0.2) above f1 (0.3): after f0 it runs b0,
    # and f1 then finishes first on gpu1, which takes b1 too: 5.0 ms. By paths f1 (1.5 + 2 +
    # 0.3) outranks b0 (3.5): f1 follows f0 on gpu0 and everything shares it, 4.8 ms, the optimum
    p = _layer_pairs({"f0": 1.5, "b0": 2.8, "f1": 0.3, "b1": 0.2}, [("f0", "f1", 2_000_000), ("b0", "b1", 500_000)])
    assert _optimum(p) == pytest.approx(4.8)
    assert heft(p).makespan_ms == pytest.approx(5.0)
    found = heft_by_paths(p)
    assert found is not None
    _valid(p, found)
    assert found.makespan_ms == pytest.approx(4.8)


def test_the_staged_heuristic_also_lists_blocks_in_turn_by_paths() -> None:
    # three layers, forward and gradients joined only by groups, on 2 GPUs. With L0 on gpu0
    # and L1, L2 on gpu1, by paths gpu0 runs b0 then f0 and gpu1 the gradients b1, b2 before
    # f1 (ready at 6.0 ms) and f2: 8.0 ms; by upward rank or earliest start (the orders tried
    # before) the best block placement took 8.4 ms. The optimum (brute force) is 7.3 ms
    p = _layer_pairs({"f0": 1.7, "b0": 2.3, "f1": 1.0, "b1": 0.9, "f2": 0.9, "b2": 2.4},
                     [("f0", "f1", 2_000_000), ("b0", "b1", 500_000), ("f1", "f2", 500_000), ("b1", "b2", 500_000)])
    assert _optimum(p) == pytest.approx(7.3)
    found = stages(p, math.inf, 60)
    assert found is not None
    _valid(p, found)
    assert found.makespan_ms == pytest.approx(8.0)


def test_justifying_moves_an_op_late_to_let_an_earlier_one_go_first() -> None:
    # the case above: right-justified, a (1 ms) runs last on gpu0 and c (5 ms) before it;
    # left-justified again in that order, a comes first and b starts at 1 ms: 11 -> 6 ms
    from tests.conftest import fully_connected, graph

    doc = graph([("a", 1.0), ("b", 5.0), ("c", 5.0)], [("a", "b", 0)])
    p = build_problem(parse_graph(doc), parse_hardware(fully_connected(2)))
    slow = retime(p, Solution(device=[0, 1, 0], order=[[2, 0], [1]]))
    fast = justify(p, slow)
    assert fast.solution.device == [0, 1, 0]
    assert fast.solution.order == [[0, 2], [1]]
    assert fast.makespan_ms == pytest.approx(6.0)
    assert justify(p, fast) is fast  # nothing left to gain


@pytest.mark.parametrize("seed", range(4))
def test_justifying_keeps_the_placement_and_never_lengthens_the_schedule(seed: int) -> None:
    p = _training(seed, n=30)
    rng = random.Random(seed)
    device = _random_placement(p, rng)
    # per-device orders from random priorities: a valid schedule with gaps to close
    start = retime(p, solution_from_starts(p, device, [rng.random() for _ in range(p.n_ops)]))
    again = justify(p, start)
    assert again.solution.device == device
    _valid(p, again)
    assert again.makespan_ms < start.makespan_ms  # shorter on these four (e.g. 53.69 -> 44.92 ms)
    assert again.makespan_ms >= lower_bound_ms(p) - 1e-9


@pytest.mark.parametrize("seed", range(4))
def test_resequencing_keeps_the_placement_and_gives_a_valid_schedule(seed: int) -> None:
    p = _training(seed, n=30)
    device = _random_placement(p, random.Random(seed))
    again = resequence(p, device)
    assert again is not None and again.solution.device == device
    _valid(p, again)
    assert again.makespan_ms >= lower_bound_ms(p) - 1e-9


def test_group_moves_go_on_resequenced_once_retimed_moves_are_stuck() -> None:
    # a separated training graph (forward and backward joined only by groups) from HEFT: the
    # re-timed moves stop at a local optimum that resequenced moves leave
    from benchmarks.graphs import separated_training

    g = parse_graph(separated_training(training_step(layered(40, seed=1, ccr=1.0))))
    p = build_problem(g, parse_hardware(fully_connected_hardware(4, link_gb_per_s=10.0, latency_us=0)))
    start = heft(p)
    better, counts = improve_by_moves(p, start, math.inf, 3000, 0)
    _valid(p, better)
    assert counts["resequenced"] > 0  # 5 of 13 moves (45.11 -> 38.82 ms)
    assert better.makespan_ms < start.makespan_ms
    again, _ = improve_by_moves(p, start, math.inf, 3000, 0)  # deterministic
    assert again.solution.device == better.solution.device


def test_group_moves_go_on_justified_once_resequenced_moves_are_stuck() -> None:
    from benchmarks.graphs import separated_training

    g = parse_graph(separated_training(training_step(layered(40, seed=2, ccr=1.0))))
    p = build_problem(g, parse_hardware(fully_connected_hardware(4, link_gb_per_s=10.0, latency_us=0)))
    better, counts = improve_by_moves(p, heft(p), math.inf, 3000, 0, justifying=True)
    _valid(p, better)
    assert counts["justified"] > 0  # the last of 12 moves (42.21 -> 41.80 ms)
    without, counts = improve_by_moves(p, heft(p), math.inf, 3000, 0)
    assert counts["justified"] == 0 and without.makespan_ms > better.makespan_ms
    again, _ = improve_by_moves(p, heft(p), math.inf, 3000, 0, justifying=True)
    assert again.solution.device == better.solution.device


def test_a_run_of_the_critical_path_moves_where_single_group_moves_are_stuck() -> None:
    # the chain a -> b -> c -> d (1 ms each, 1 ms per transfer) and b -> d, a and d pinned to
    # gpu0, b and c on gpu1: 6 ms with two transfers on the path. b or c alone on gpu0 still
    # pays two (6 ms, no gain); b and c together on gpu0 pay none: 4 ms. (b's third neighbour
    # keeps b and c from being a chain of groups, whose move would come first.)
    doc = graph([(op, 1.0) for op in "abcd"], [("a", "b", 1_000_000), ("b", "c", 1_000_000),
                                               ("c", "d", 1_000_000), ("b", "d", 1_000_000)])
    for op in doc["ops"]:
        if op["id"] in "ad":
            op["device"] = "gpu0"
    p = build_problem(parse_graph(doc), parse_hardware(fully_connected(2, bandwidth_gb_per_s=1.0)))
    start = retime(p, Solution(device=[0, 1, 1, 0], order=[[0, 3], [1, 2]]))
    assert start.makespan_ms == pytest.approx(6.0)
    better, counts = improve_by_moves(p, start, math.inf, 100, 0)
    _valid(p, better)
    assert better.solution.device == [0, 0, 0, 0]
    assert better.makespan_ms == pytest.approx(4.0)
    assert counts["run_moves"] == 1


def _fork_with_heavy_branches():
    """r -> s, then two branches y1 -> y2 -> y3 and p1 -> ... -> p4 from s to t, then t -> u;
    1 ms per op, 0 bytes into and out of each branch, 10 ms transfers inside them (1 GB/s)."""
    heavy, ops = 10_000_000, "r s y1 y2 y3 p1 p2 p3 p4 t u".split()
    edges = [("r", "s", 0), ("s", "y1", 0), ("y1", "y2", heavy), ("y2", "y3", heavy), ("y3", "t", 0),
             ("s", "p1", 0), ("p1", "p2", heavy), ("p2", "p3", heavy), ("p3", "p4", heavy), ("p4", "t", 0),
             ("t", "u", 0)]
    return build_problem(parse_graph(graph([(op, 1.0) for op in ops], edges)), parse_hardware(fully_connected(2)))


def test_chains_of_groups_are_the_paths_of_groups_with_two_neighbours() -> None:
    from placer.local_search import _Chains

    p = _fork_with_heavy_branches()
    chains = {tuple(p.ops[p.groups[g][0]] for g in chain) for chain in _Chains(p).chains}
    # s and t have three neighbours, r and u one: the two branches are the chains
    assert {c if c[0] < c[-1] else c[::-1] for c in chains} == {("y1", "y2", "y3"), ("p1", "p2", "p3", "p4")}


def test_a_chain_of_groups_moves_where_group_and_run_moves_are_stuck() -> None:
    # everything on gpu0: 11 ms. Any one branch op on gpu1 cuts a 10 ms transfer into its
    # branch; the whole branch on gpu1 pays no transfer and runs beside the other: 8 ms
    p = _fork_with_heavy_branches()
    start = retime(p, Solution(device=[0] * p.n_ops, order=[list(range(p.n_ops)), []]))
    assert start.makespan_ms == pytest.approx(11.0)
    better, counts = improve_by_moves(p, start, math.inf, 100, 0)
    _valid(p, better)
    assert counts["chain_moves"] == 1 and counts["moves"] == 1
    assert better.makespan_ms == pytest.approx(8.0)


def _training_chain(layers: int, transfer_ms: float):
    """A training step as one chain: forward ops f_i, gradient ops b_i in reverse, and each
    layer's weight update u_i after its gradient; f_i, b_i and u_i in one group, 1 ms each;
    every tensor between layers takes `transfer_ms` between the two devices (1 GB/s)."""
    size = round(transfer_ms * 1_000_000)
    ops, edges = [], []
    for i in range(layers):
        ops += [{"id": f"{c}{i}", "time_ms": 1.0, "group": f"L{i}"} for c in "fbu"]
        edges += [{"src": f"f{i}", "dst": f"b{i}", "bytes": 0}, {"src": f"b{i}", "dst": f"u{i}", "bytes": 0}]
        if i:
            edges += [{"src": f"f{i - 1}", "dst": f"f{i}", "bytes": size}, {"src": f"b{i}", "dst": f"b{i - 1}", "bytes": size}]
    doc = {"format": "placer.graph/v1", "name": "training-chain", "ops": ops, "edges": edges}
    return build_problem(parse_graph(doc), parse_hardware(fully_connected(2)))


def test_offloading_a_runs_first_layers_gains_where_every_smaller_move_costs() -> None:
    # 16 layers on one device: 48 ms. The first n layers on the other device cost two 2.5 ms
    # transfers and let their n gradients and updates run beside the other device's updates:
    # max(2L + n + 2T, 3L - 2n + T) = 42.5 ms for n = 4, 42 for n = 5 (the best offload). One layer
    # moved alone (or a run's end) saves less than its transfers cost
    p = _training_chain(16, 2.5)
    start = retime(p, Solution(device=[0] * p.n_ops, order=[list(range(p.n_ops)), []]))
    assert start.makespan_ms == pytest.approx(48.0)
    better, counts = improve_by_moves(p, start, math.inf, 2000, 0)
    _valid(p, better)
    assert counts["run_moves"] >= 1
    assert better.makespan_ms == pytest.approx(42.0)
    offloaded = {p.ops[k] for k in range(p.n_ops) if better.solution.device[k] != better.solution.device[-1]}
    assert offloaded == {f"{c}{i}" for c in "fbu" for i in range(5)}


def test_kicks_leave_the_local_optimum_where_hill_climbing_stops() -> None:
    from benchmarks.graphs import separated_training

    g = parse_graph(separated_training(training_step(layered(40, seed=3, ccr=1.0))))
    p = build_problem(g, parse_hardware(fully_connected_hardware(4, link_gb_per_s=10.0, latency_us=0)))
    climbed, counts = improve_by_moves(p, heft(p), math.inf, 3000, 0)
    assert counts["evaluations"] < 3000 and counts["kicks"] == 0  # stopped: no move gains
    kicked, counts = improve_by_moves(p, heft(p), math.inf, 3000, 0, kicks=True)
    _valid(p, kicked)
    assert counts["kicks_improved"] > 0  # 2 of 4 kicks (40.14 -> 39.71 ms)
    assert kicked.makespan_ms < climbed.makespan_ms
    again, _ = improve_by_moves(p, heft(p), math.inf, 3000, 0, kicks=True)
    assert again.solution.device == kicked.solution.device


def test_the_critical_path_ends_at_the_makespan_and_is_a_chain() -> None:
    p = _training(1)
    s = heft(p)
    path = critical_path(p, s)
    assert s.end_ms[path[-1]] == pytest.approx(s.makespan_ms)
    assert s.start_ms[path[0]] == pytest.approx(0.0)
    for a, b in itertools.pairwise(path):
        assert s.end_ms[a] <= s.start_ms[b] + 1e-9


def test_neighbourhood_search_offers_only_valid_improving_answers() -> None:
    p = _training(2, n=30, devices=3)
    start = heft(p)
    f = build_cpsat(p, start, lower_bound_ms(p), redundant_cumulative=False, symmetry_breaking=False)
    offered: list[Schedule] = []

    def offer(solution: Solution, source: str) -> Schedule:
        schedule = retime(p, solution)
        _valid(p, schedule)
        offered.append(schedule)
        return schedule

    budget = Budget(2.0, deterministic=True)
    counts = improve(p, f, start, budget, 2.0, 0, offer, lambda s: False, step_s=0.5)
    assert counts["steps"] >= 1
    assert offered and min(s.makespan_ms for s in offered) <= start.makespan_ms + 1e-9


def test_a_layers_neighbourhood_frees_a_range_of_groups_in_topological_order() -> None:
    """A layer's forward and backward ops share a group: a range of groups frees whole layers,
    wherever their ops run in time."""
    import random

    from placer.neighbourhood import _neighbourhood

    p = _training(2, n=30, devices=3)
    s = heft(p)
    for seed in range(5):
        free = _neighbourhood(p, s, "layers", 7, random.Random(seed))
        assert len(free) == 7 and max(free) - min(free) == 6 and max(free) < len(p.groups)
    assert _neighbourhood(p, s, "layers", 10 * len(p.groups), random.Random(0)) == set(range(len(p.groups)))


def test_the_time_the_bounds_at_the_end_leave_goes_to_windows_from_the_final_incumbent() -> None:
    """Whatever the strategies before leave of a deterministic budget is the window search's,
    from the incumbent as the run has it then; its passes add to the windows' counts."""
    from placer.engine import PlaceOptions, Strategy, _improve_by_windows, _improve_in_leftover, _Run

    g = parse_graph(training_step(layered(40, seed=1)))
    run = _Run(g, parse_hardware(fully_connected_hardware(4)), PlaceOptions(time_limit_s=3, deterministic=True),
               None, Strategy(windows_fruitless_restarts=0))
    p = run.problem
    start = resequence(p, _random_placement(p, random.Random(0)))
    run.offer(start, "a random placement")
    assert run.best is start and not run.proven(start)
    _improve_by_windows(run, 0.0)  # too short a share: no pass
    assert run.stats.windows_passes is None
    _improve_by_windows(run, 0.2)  # the first windows, as before the monolithic solve
    first_passes, first_steps, after_first = run.stats.windows_passes, run.stats.windows_steps, run.best
    assert first_passes >= 1 and not run.proven(after_first)
    left = run.budget.remaining()
    _improve_in_leftover(run)
    assert run.stats.leftover_s == pytest.approx(left, abs=1e-3) and 0 < left < 3.0
    # one more pass, counted on top of the first windows' (not in their place)
    assert run.stats.windows_passes == first_passes + 1 and run.stats.windows_steps > first_steps
    assert run.best.makespan_ms < start.makespan_ms and run.best.makespan_ms <= after_first.makespan_ms
    assert run.stats.windows_restarts is None
    _valid(p, run.best)


def test_what_the_leftover_windows_leave_goes_to_window_searches_from_other_seeds() -> None:
    """A leftover window search stopped by its patience leaves budget: searches drawn from other
    seeds take it, from the incumbent they find, until `windows_fruitless_restarts` in a row gain
    nothing or the time is spent; none can lengthen the answer."""
    from placer.engine import PlaceOptions, Strategy, _improve_in_leftover, _Run

    g = parse_graph(training_step(layered(40, seed=1)))
    answers = []
    for restarts in (0, 3):
        run = _Run(g, parse_hardware(fully_connected_hardware(4)), PlaceOptions(time_limit_s=3, deterministic=True),
                   None, Strategy(windows_fruitless_restarts=restarts))
        p = run.problem
        run.offer(resequence(p, _random_placement(p, random.Random(0))), "a random placement")
        _improve_in_leftover(run)
        answers.append(run.best.makespan_ms)
        _valid(p, run.best)
    assert run.stats.windows_restarts is not None and run.stats.windows_restarts >= 1
    assert run.stats.windows_passes > run.stats.windows_restarts
    assert answers[1] <= answers[0]
    assert run.proven(run.best) or run.budget.remaining() < run.strategy.windows_min_s \
        or run.stats.windows_restarts >= 3


def test_a_coarse_solve_that_shortens_nothing_in_its_first_quarter_stops_there() -> None:
    """The coarse model's CP-SAT solve gets the rest of its time only where its first quarter
    shortened the incumbent: from CP-SAT's own answer on the whole model it cannot, from every
    op on one device it does."""
    from placer.coarsen import coarsen_for
    from placer.engine import PlaceOptions, Strategy, _Run, _solve_cpsat, _solve_cpsat_coarse_first

    g = parse_graph(training_step(layered(24, seed=1)))
    hw = parse_hardware(fully_connected_hardware(2))
    solved = _Run(g, hw, PlaceOptions(time_limit_s=8, deterministic=True), None, Strategy())
    p = solved.problem
    coarse = coarsen_for(p, "force", max_ops=p.n_ops // 4)
    assert coarse is not None
    _solve_cpsat(solved, None, 0.5)
    best = solved.best
    assert best is not None and not solved.proven(best)
    _solve_cpsat_coarse_first(solved, coarse, 1.0)
    assert solved.best is best and solved.stats.cpsat_coarse_stopped and solved.budget.solves == 2

    on_one = _Run(g, hw, PlaceOptions(time_limit_s=8, deterministic=True), None, Strategy())
    start = resequence(p, [0] * p.n_ops)
    on_one.offer(start, "one device")
    _solve_cpsat_coarse_first(on_one, coarse, 1.0)
    assert on_one.best.makespan_ms < start.makespan_ms
    assert on_one.stats.cpsat_coarse_stopped is None and on_one.budget.solves == 2
    _valid(p, on_one.best)
