"""Coarsening: super-ops never create cycles, expanded answers are valid on the original graph."""
from __future__ import annotations

import random

import networkx as nx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placer.coarsen import Coarsening, coarsen, coarsen_for
from placer.errors import InputError
from placer.heuristics import heft
from placer.model import Problem, build_problem
from placer.schedule import Schedule, retime
from placer.schema import ResultSpec, ScheduleEntry, TransferEntry, parse_graph, parse_hardware
from placer.validate import check_result
from tests.conftest import fully_connected, graph


def _problem(doc: dict, n_devices: int = 2, **device: object) -> Problem:
    return build_problem(parse_graph(doc), parse_hardware(fully_connected(n_devices, 10.0, 5.0, **device)))


def _result(problem: Problem, schedule: Schedule) -> ResultSpec:
    """The result document of a schedule, built as the engine builds it, for check_result."""
    p, sol = problem, schedule.solution
    return ResultSpec(
        status="feasible", solver="heft", makespan_ms=schedule.makespan_ms,
        placement={p.ops[k]: p.devices[d] for k, d in enumerate(sol.device)},
        schedule=[ScheduleEntry(op=p.ops[k], device=p.devices[sol.device[k]], start_ms=schedule.start_ms[k],
                                end_ms=schedule.end_ms[k]) for k in range(p.n_ops)],
        transfers=[TransferEntry(src=p.ops[p.edges[t.edge].src], dst=p.ops[p.edges[t.edge].dst],
                                 bytes=p.edges[t.edge].size_bytes, route=list(t.route),
                                 start_ms=t.start_ms, end_ms=t.end_ms) for t in schedule.transfers],
        memory_bytes=dict(zip(p.devices, schedule.memory_bytes(p))),
    )


def _check_coarsening(c: Coarsening) -> None:
    """Structure: a partition into super-ops, conserved costs, a DAG, groups and pins kept."""
    p, q = c.original, c.coarse
    assert sorted(k for ms in c.members for k in ms) == list(range(p.n_ops))
    assert all(c.super_of[k] == s for s, ms in enumerate(c.members) for k in ms)
    for s, ms in enumerate(c.members):
        for d in range(p.n_devices):
            assert q.time_ms[s][d] == pytest.approx(sum(p.time_ms[k][d] for k in ms), abs=1e-12)
        assert q.memory_bytes[s] == sum(p.memory_bytes[k] for k in ms)
        rank = {k: i for i, k in enumerate(ms)}
        assert all(rank[p.edges[i].src] < rank[k] for k in ms for i in p.preds[k] if p.edges[i].src in rank)
    for d in range(p.n_devices):
        assert sum(row[d] for row in q.time_ms) == pytest.approx(sum(row[d] for row in p.time_ms))
    # coarse edges: one per pair of super-ops, no self loops, the largest tensor, a DAG
    largest: dict[tuple[int, int], int] = {}
    for e in p.edges:
        pair = (c.super_of[e.src], c.super_of[e.dst])
        if pair[0] != pair[1]:
            largest[pair] = max(largest.get(pair, 0), e.size_bytes)
    assert {(e.src, e.dst): e.size_bytes for e in q.edges} == largest
    assert len(q.edges) == len(largest)
    assert all(e.src < e.dst for e in q.edges)  # ops indexed in topological order
    assert nx.is_directed_acyclic_graph(nx.DiGraph([(e.src, e.dst) for e in q.edges]))
    # every original group inside one coarse group, whose devices its pins allow
    for g, ops in enumerate(p.groups):
        coarse_groups = {q.group[c.super_of[k]] for k in ops}
        assert len(coarse_groups) == 1
        assert set(q.allowed[coarse_groups.pop()]) <= set(p.allowed[g])
    assert c.stats()["original_ops"] == p.n_ops and c.stats()["coarse_ops"] == q.n_ops


def _check_expanded(c: Coarsening) -> Schedule:
    """HEFT on the coarse problem, expanded and re-timed on the original: a valid answer."""
    p = c.original
    coarse_schedule = heft(c.coarse)
    assert coarse_schedule is not None
    schedule = retime(p, c.expand(coarse_schedule.solution))
    assert schedule.makespan_ms <= coarse_schedule.makespan_ms + 1e-9  # the coarse model is an upper bound
    for g, ops in enumerate(p.groups):
        devices = {schedule.solution.device[k] for k in ops}
        assert len(devices) == 1 and devices <= set(p.allowed[g])
    for used, cap in zip(schedule.memory_bytes(p), p.capacity_bytes):
        assert cap is None or used <= cap
    assert check_result(p.graph, p.hardware, _result(p, schedule)) == []
    return schedule


def _training_doc(n_forward: int, seed: int, pins: bool = True, zero_time: float = 0.2) -> dict:
    """A random forward DAG, its backward ops (same group, edges reversed), weight updates,
    some extra groups joining unrelated layers, pins, memory and zero-time ops."""
    rng = random.Random(seed)
    ops: list[dict] = []
    edges: list[dict] = []
    for i in range(n_forward):
        t = 0.0 if rng.random() < zero_time else round(rng.uniform(0.05, 3.0), 3)
        ops.append({"id": f"f{i}", "time_ms": t, "memory_bytes": rng.randint(0, 100), "group": f"g{i}"})
    for i in range(1, n_forward):
        for j in sorted({rng.randrange(max(0, i - 6), i) for _ in range(rng.choice([1, 1, 2, 3]))}):
            edges.append({"src": f"f{j}", "dst": f"f{i}", "bytes": rng.randint(0, 50_000_000)})
    for i in reversed(range(n_forward)):
        ops.append({"id": f"b{i}", "time_ms": round(2 * ops[i]["time_ms"], 3), "group": f"g{i}"})
        edges.append({"src": f"f{i}", "dst": f"b{i}", "bytes": rng.randint(0, 10_000_000)})
        if rng.random() < 0.5:
            ops.append({"id": f"u{i}", "time_ms": round(rng.uniform(0.0, 0.2), 3), "group": f"g{i}",
                        "memory_bytes": rng.randint(0, 50)})
            edges.append({"src": f"b{i}", "dst": f"u{i}", "bytes": rng.randint(0, 1_000_000)})
    for e in list(edges):
        if e["src"].startswith("f") and e["dst"].startswith("f"):
            edges.append({"src": "b" + e["dst"][1:], "dst": "b" + e["src"][1:], "bytes": e["bytes"]})
    by_id = {op["id"]: op for op in ops}
    for _ in range(n_forward // 10):  # tie two random layers: a shared weight
        a, b = rng.sample(range(n_forward), 2)
        for prefix in "fbu":
            if f"{prefix}{b}" in by_id:
                by_id[f"{prefix}{b}"]["group"] = f"g{a}"
    if pins:
        for i in rng.sample(range(n_forward), max(1, n_forward // 15)):
            group = by_id[f"f{i}"]["group"]
            if not any(op.get("device") and op["group"] == group for op in ops):
                by_id[f"f{i}"]["device"] = f"gpu{rng.randrange(2)}"
    pinned = {op["group"]: op["device"] for op in ops if op.get("device")}
    for op in ops:  # one pin per group (the schema rejects a group pinned twice)
        if op["group"] in pinned and op.get("device") and op["device"] != pinned[op["group"]]:
            del op["device"]
    return {"format": "placer.graph/v1", "name": f"train-{n_forward}-s{seed}", "ops": ops, "edges": edges}


# --------------------------------------------------------------------------- small exact cases


def test_a_chain_collapses_into_one_super_op() -> None:
    doc = graph([(f"c{i}", 1.0 + i, 10 * i) for i in range(5)],
                [(f"c{i}", f"c{i + 1}", 1000) for i in range(4)])
    c = coarsen(_problem(doc), max_ops=1)
    assert c.coarse.n_ops == 1 and c.coarse.edges == []
    assert c.members == [[0, 1, 2, 3, 4]]
    assert c.coarse.ops == ["c0+c1+c2+c3+c4"]
    assert c.coarse.time_ms == [[15.0, 15.0]]
    assert c.coarse.memory_bytes == [100]
    _check_coarsening(c)
    assert _check_expanded(c).makespan_ms == 15.0


def test_the_target_stops_the_contraction() -> None:
    doc = graph([(f"c{i}", 1.0) for i in range(6)], [(f"c{i}", f"c{i + 1}", 0) for i in range(5)])
    c = coarsen(_problem(doc), max_ops=4)
    assert c.coarse.n_ops == 4
    _check_coarsening(c)


def test_a_path_of_two_edges_forbids_contracting_its_ends() -> None:
    # a -> b -> d and a -> d; b is pinned elsewhere, so a and d could only merge by
    # contracting a -> d, which the path through b turns into a cycle.
    doc = graph([("a", 1.0), ("b", 1.0), ("d", 1.0)], [("a", "b", 10), ("b", "d", 10), ("a", "d", 10)])
    for op, where in (("a", "gpu0"), ("b", "gpu1"), ("d", "gpu0")):
        next(o for o in doc["ops"] if o["id"] == op)["device"] = where
    c = coarsen(_problem(doc), max_ops=1)
    assert c.coarse.n_ops == 3
    _check_coarsening(c)


def test_a_diamond_contracts_without_a_cycle_at_every_size() -> None:
    doc = graph([("a", 1.0), ("b", 2.0), ("c", 3.0), ("d", 1.0)],
                [("a", "b", 5), ("a", "c", 6), ("b", "d", 7), ("c", "d", 8)])
    for target in (4, 3, 2, 1):
        c = coarsen(_problem(doc), max_ops=target)
        assert c.coarse.n_ops == target
        _check_coarsening(c)
        _check_expanded(c)


def test_forward_and_backward_ops_of_a_group_never_form_a_cycle() -> None:
    # f0 -> f1 -> f2 -> b2 -> b1 -> b0, each f_i with its b_i in group g_i: f_i and b_i
    # are joined by a direct edge and by the path through the later layers.
    ops = [(f"f{i}", 1.0) for i in range(3)] + [(f"b{i}", 2.0) for i in range(3)]
    edges = [("f0", "f1", 100), ("f1", "f2", 100), ("b2", "b1", 100), ("b1", "b0", 100)]
    edges += [(f"f{i}", f"b{i}", 50) for i in range(3)]
    doc = graph(ops, edges)
    for op in doc["ops"]:
        op["group"] = "g" + op["id"][1:]
    p = _problem(doc)
    for target in range(p.n_ops, 0, -1):
        c = coarsen(p, max_ops=target)
        _check_coarsening(c)
        _check_expanded(c)
        for ms in c.members:  # no super-op holds f_i and b_i without everything in between
            names = {p.ops[k] for k in ms}
            for i in range(2):
                if {f"f{i}", f"b{i}"} <= names:
                    assert {f"f{i + 1}", f"b{i + 1}"} <= names


def test_pins_of_different_devices_never_share_a_super_op() -> None:
    doc = graph([(f"c{i}", 1.0) for i in range(4)], [(f"c{i}", f"c{i + 1}", 0) for i in range(3)])
    doc["ops"][0]["device"] = "gpu0"
    doc["ops"][3]["device"] = "gpu1"
    c = coarsen(_problem(doc), max_ops=1)
    assert c.coarse.n_ops == 2
    _check_coarsening(c)
    assert sorted(c.coarse.allowed) == [[0], [1]]


def test_memory_keeps_the_coarse_problem_packable() -> None:
    # four independent layers of 60 bytes on two devices of 100: joined classes may hold
    # at most half a device (memory_fraction), so the answer still fits
    doc = graph([(f"c{i}", 1.0, 60) for i in range(4)], [(f"c{i}", f"c{i + 1}", 0) for i in range(3)])
    c = coarsen(_problem(doc, memory_bytes=130), max_ops=1)
    assert c.coarse.n_ops == 4
    c = coarsen(_problem(doc, memory_bytes=130), max_ops=1, memory_fraction=1.0)
    assert c.coarse.n_ops == 2
    _check_coarsening(c)
    _check_expanded(c)


def test_bad_arguments_are_input_errors() -> None:
    p = _problem(graph([("a", 1.0)]))
    with pytest.raises(InputError, match="max_ops"):
        coarsen(p, 0)
    with pytest.raises(InputError, match="memory_fraction"):
        coarsen(p, 1, memory_fraction=0.0)
    with pytest.raises(InputError, match="coarsen"):
        coarsen_for(p, "sometimes")  # type: ignore[arg-type]
    other = heft(_problem(graph([("a", 1.0), ("b", 1.0)])))
    with pytest.raises(InputError, match="guide"):
        coarsen(p, 1, guide=other)


def test_modes_off_auto_force() -> None:
    doc = graph([(f"c{i}", 1.0) for i in range(10)], [(f"c{i}", f"c{i + 1}", 0) for i in range(9)])
    p = _problem(doc)
    assert coarsen_for(p, "off") is None
    assert coarsen_for(p, "auto", threshold_ops=10) is None
    auto = coarsen_for(p, "auto", threshold_ops=9, max_ops=3)
    forced = coarsen_for(p, "force", max_ops=3)
    assert auto is not None and forced is not None
    assert auto.coarse.n_ops == forced.coarse.n_ops == 3


# --------------------------------------------------------------------------- random graphs


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n_forward=st.integers(10, 150), seed=st.integers(0, 10**6), n_devices=st.integers(2, 4),
       fraction=st.sampled_from([0.05, 0.2, 0.5]), guided=st.booleans())
def test_random_training_graphs_coarsen_and_expand_to_valid_answers(
        n_forward: int, seed: int, n_devices: int, fraction: float, guided: bool) -> None:
    doc = _training_doc(n_forward, seed)
    memory = sum(op.get("memory_bytes", 0) for op in doc["ops"])
    p = _problem(doc, n_devices, memory_bytes=memory)
    guide = heft(p) if guided else None
    c = coarsen(p, max(1, int(fraction * p.n_ops)), guide=guide)
    assert c.coarse.n_ops <= p.n_ops
    _check_coarsening(c)
    _check_expanded(c)
    if guide is not None:  # the guide stays a coarse solution, and expands to itself
        projected = c.project(guide.solution)
        assert projected is not None
        assert retime(p, c.expand(projected)).makespan_ms == pytest.approx(guide.makespan_ms, abs=1e-9)


def test_coarsening_is_deterministic() -> None:
    p = _problem(_training_doc(120, seed=7), 4)
    first, second = coarsen(p, 40), coarsen(p, 40)
    assert first.members == second.members and first.coarse.ops == second.coarse.ops
    guide = heft(p)
    assert coarsen(p, 40, guide=guide).members == coarsen(p, 40, guide=guide).members


# --------------------------------------------------------------------------- a 2,000-op graph


@pytest.fixture(scope="module")
def big() -> Problem:
    from benchmarks.graphs import layered, training_step

    doc = training_step(layered(1000))
    return build_problem(parse_graph(doc), parse_hardware(fully_connected(4, 25.0, 5.0)))


def test_a_2000_op_graph_coarsens_to_400_ops(big: Problem) -> None:
    """(About 2 s alone on a 2-core machine: its speed is measured in benchmarks, never
    asserted here, where the load of the machine would decide the outcome.)"""
    assert big.n_ops == 2000
    c = coarsen(big, 400)
    assert c.coarse.n_ops <= 400
    _check_coarsening(c)
    _check_expanded(c)


def test_a_2000_op_graph_coarsens_along_its_heft_schedule(big: Problem) -> None:
    guide = heft(big)
    c = coarsen(big, 400, guide=guide)
    _check_coarsening(c)
    _check_expanded(c)
    projected = c.project(guide.solution)
    assert projected is not None
    assert retime(big, c.expand(projected)).makespan_ms == pytest.approx(guide.makespan_ms)


@pytest.mark.slow
@pytest.mark.parametrize("guided", [False, True])
def test_cpsat_on_a_coarse_inception_expands_to_a_valid_answer(guided: bool) -> None:
    from placer.bounds import lower_bound_ms
    from placer.formulations.cpsat_model import build_cpsat
    from placer.resolve import resolve_hardware
    from placer.zoo import build
    from solvers.cpsat import solve_cpsat

    p = build_problem(parse_graph(build("inception_v3", 32)), resolve_hardware("dgx1_v100_quad"))
    guide = heft(p)
    c = coarsen(p, 300, guide=guide if guided else None)
    _check_coarsening(c)
    hint = heft(c.coarse)
    f = build_cpsat(c.coarse, hint, lower_bound_ms(c.coarse))
    run, solver = solve_cpsat(f.model, 20.0, threads=2)
    assert run.has_solution
    schedule = retime(p, c.expand(f.decode(solver.value, c.coarse)))
    assert check_result(p.graph, p.hardware, _result(p, schedule)) == []


def test_place_with_forced_coarsening_reports_counts_and_validates() -> None:
    """The engine solves super-ops, expands them and validates on the original graph; the
    bound stays the original's or the cones' (a coarse bound would not be valid)."""
    from benchmarks.graphs import fully_connected_hardware, layered, training_step
    from placer.bounds import lower_bound_ms
    from placer.engine import PlaceOptions, place
    from placer.model import build_problem
    from placer.schema import parse_graph, parse_hardware
    from placer.validate import check_result

    g = parse_graph(training_step(layered(80, seed=2)))
    hw = parse_hardware(fully_connected_hardware(2))
    r = place(g, hw, PlaceOptions(time_limit_s=5, threads=1, coarsen="force", coarsen_max_ops=40))
    stats = r.stats.model_dump()
    assert stats["original_ops"] == 160 and stats["coarse_ops"] <= 40
    assert r.status in ("optimal", "feasible") and check_result(g, hw, r) == []
    # the original's named bounds and the cones' (placer.cone_bounds), never a coarse model's
    named = stats["bounds_ms"]
    assert max(v for k, v in named.items() if not k.startswith("cones_")) == \
        pytest.approx(lower_bound_ms(build_problem(g, hw)))
    assert r.lower_bound_ms == pytest.approx(min(r.makespan_ms, max(named.values())))
    assert r.makespan_ms <= r.baselines.heft_ms + 1e-9
