"""Routing by transfer size, the event-driven simulator, and re-timing."""
from __future__ import annotations

import pytest

from placer.model import build_problem
from placer.routing import Router
from placer.schedule import Solution, retime
from placer.schema import HardwareSpec, parse_graph, parse_hardware
from placer.simulator import simulate
from tests.conftest import graph


def thin_direct_fat_switched() -> HardwareSpec:
    """Two GPUs: a thin direct link (1 GB/s, 1 us) and two fat hops through a switch (10 GB/s, 50 us each)."""
    return parse_hardware({
        "devices": [{"id": "g0"}, {"id": "g1"}],
        "switches": [{"id": "sw"}],
        "links": [
            {"a": "g0", "b": "g1", "bandwidth_gb_per_s": 1.0, "latency_us": 1.0},
            {"a": "g0", "b": "sw", "bandwidth_gb_per_s": 10.0, "latency_us": 50.0},
            {"a": "sw", "b": "g1", "bandwidth_gb_per_s": 10.0, "latency_us": 50.0},
        ],
    })


def test_route_depends_on_size() -> None:
    """A direct thin link wins for small tensors; two fat hops through a switch win for big ones."""
    hw = thin_direct_fat_switched()
    r = Router(hw)
    # 1 kB: direct 1e3/1e9 s = 0.001 ms + 0.001 ms; via switch 2 * (0.0001 + 0.05) ms
    assert r.route(1000, "g0", "g1") == ("g0", "g1")
    assert r.delay_ms(1000, "g0", "g1") == pytest.approx(0.002)
    # 100 MB: direct 100 ms; via switch 2 * (10 + 0.05) = 20.1 ms
    assert r.route(100_000_000, "g0", "g1") == ("g0", "sw", "g1")
    assert r.delay_ms(100_000_000, "g0", "g1") == pytest.approx(20.1)
    assert r.route(5, "g1", "g1") == ("g1",)


def test_route_through_another_gpu() -> None:
    hw = parse_hardware({
        "devices": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
        "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 1.0}, {"a": "b", "b": "c", "bandwidth_gb_per_s": 2.0}],
    })
    r = Router(hw)
    assert r.route(1_000_000, "a", "c") == ("a", "b", "c")
    assert r.delay_ms(1_000_000, "a", "c") == pytest.approx(1.0 + 0.5)  # store and forward, eq. 11


def flexflow_fig4() -> tuple[dict, dict, dict]:
    """FlexFlow (Jia et al., SysML 2019) Fig. 4: three GPUs in a line, 1 ms per hop."""
    ops = [(f"t{i}_{k}", 2.0) for i in (1, 2) for k in (1, 2)]
    ops += [(f"t{i}_{k}", 1.0) for i in (3, 4) for k in (1, 2)]
    ops += [("t5_1", 3.0), ("t6_1", 3.0)]
    edges = [(f"t1_{k}", f"t3_{k}", 1_000_000) for k in (1, 2)]
    edges += [(f"t2_{k}", f"t4_{k}", 1_000_000) for k in (1, 2)]
    edges += [(f"t3_{k}", f"t4_{k}", 1_000_000) for k in (1, 2)]
    edges += [("t3_1", "t5_1", 1_000_000), ("t3_2", "t5_1", 1_000_000)]
    edges += [("t4_1", "t6_1", 1_000_000), ("t4_2", "t6_1", 1_000_000)]
    hw = {
        "devices": [{"id": "gpu1"}, {"id": "gpu2"}, {"id": "gpu3"}],
        "links": [{"a": "gpu1", "b": "gpu2", "bandwidth_gb_per_s": 1.0},
                  {"a": "gpu2", "b": "gpu3", "bandwidth_gb_per_s": 1.0}],
    }
    placement = {o: "gpu1" for o, _ in ops[:4]} | {o: "gpu2" for o, _ in ops[4:8]} | {"t5_1": "gpu3", "t6_1": "gpu3"}
    return graph(ops, edges), hw, placement


@pytest.mark.parametrize("contention", [False, True])
def test_flexflow_figure_4_makespan_is_14_ms(contention: bool) -> None:
    g, hw, placement = flexflow_fig4()
    report = simulate(parse_graph(g), parse_hardware(hw), placement, contention=contention)
    assert report.makespan_ms == pytest.approx(14.0)
    assert report.start_ms["t6_1"] == pytest.approx(11.0)
    assert report.device_busy_ms == {"gpu1": 8.0, "gpu2": 4.0, "gpu3": 6.0}
    assert report.link_bytes["gpu1->gpu2"] == 4_000_000
    assert report.link_busy_ms["gpu2->gpu3"] == pytest.approx(4.0)


def test_contention_serialises_a_shared_link() -> None:
    """Two 1 ms transfers leave gpu0 over one link at t=1: the second waits under contention."""
    g = parse_graph(graph([("a", 1.0), ("b", 1.0), ("c", 1.0)], [("a", "b", 1_000_000), ("a", "c", 1_000_000)]))
    hw = parse_hardware({
        "devices": [{"id": "g0"}, {"id": "g1"}],
        "links": [{"a": "g0", "b": "g1", "bandwidth_gb_per_s": 1.0}],
    })
    placement = {"a": "g0", "b": "g1", "c": "g1"}
    free = simulate(g, hw, placement)
    busy = simulate(g, hw, placement, contention=True)
    assert free.makespan_ms == pytest.approx(4.0)   # both arrive at 2, b and c run 2-3, 3-4
    assert busy.makespan_ms == pytest.approx(4.0)   # second arrives at 3: c runs 3-4
    assert [t.end_ms for t in busy.transfers] == pytest.approx([2.0, 3.0])
    assert busy.link_busy_ms["g0->g1"] == pytest.approx(2.0)


def test_fifo_policy_and_given_order() -> None:
    g = parse_graph(graph([("a", 1.0), ("b", 5.0), ("c", 1.0), ("d", 1.0)], [("c", "d", 0)]))
    hw = parse_hardware({"devices": [{"id": "g0"}], "links": []})
    everything = {o: "g0" for o in "abcd"}
    assert simulate(g, hw, everything).makespan_ms == pytest.approx(8.0)
    given = simulate(g, hw, everything, order={"g0": ["c", "d", "a", "b"]})
    assert given.start_ms["b"] == pytest.approx(3.0)
    trace = given.to_chrome_trace()
    assert {e["name"] for e in trace["traceEvents"] if e["ph"] == "X"} == set("abcd")


def test_retime_agrees_with_the_simulator_and_rejects_cyclic_orders() -> None:
    g, hw, placement = flexflow_fig4()
    problem = build_problem(parse_graph(g), parse_hardware(hw))
    report = simulate(problem.graph, problem.hardware, placement)
    device = [problem.device_index[placement[o]] for o in problem.ops]
    order = [[] for _ in problem.devices]
    for k in sorted(range(problem.n_ops), key=lambda k: report.start_ms[problem.ops[k]]):
        order[device[k]].append(k)
    schedule = retime(problem, Solution(device=device, order=order))
    assert schedule.makespan_ms == pytest.approx(14.0)
    from placer.errors import SolutionCheckError

    i3, i1 = problem.op_index["t3_1"], problem.op_index["t1_1"]
    bad = [list(seq) for seq in order]
    bad[device[i3]].remove(i3)
    bad[device[i1]].remove(i1)
    bad[device[i1]].insert(0, i1)
    bad[device[i3]].insert(0, i3)
    order_gpu2 = bad[device[i3]]
    i4 = problem.op_index["t4_1"]
    order_gpu2.remove(i4)
    order_gpu2.insert(0, i4)  # t4_1 before t3_1 on gpu2 contradicts the edge t3_1 -> t4_1
    with pytest.raises(SolutionCheckError, match="contradicts"):
        retime(problem, Solution(device=device, order=bad))


def test_retime_lists_each_transfer_on_its_route() -> None:
    """A 1 kB and a 100 MB tensor leave g0 at 1 ms: the small one goes direct (0.002 ms), the
    big one through the switch (20.1 ms) unless the solution gives the direct route (100 ms)."""
    g = parse_graph(graph([("a", 1.0), ("b", 1.0), ("c", 1.0)], [("a", "b", 1000), ("a", "c", 100_000_000)]))
    hw = thin_direct_fat_switched()
    problem = build_problem(g, hw)
    a, b, c = (problem.op_index[o] for o in "abc")
    device = [0 if k == a else 1 for k in range(3)]
    order = [[a], sorted([b, c])]
    chosen = retime(problem, Solution(device=device, order=order))
    assert [(t.route, t.start_ms) for t in chosen.transfers] == [(("g0", "g1"), 1.0), (("g0", "sw", "g1"), 1.0)]
    assert [t.end_ms for t in chosen.transfers] == pytest.approx([1.002, 21.1])
    assert chosen.start_ms[c] == pytest.approx(21.1)
    big = problem.edges_between(a, c)[0]
    given = retime(problem, Solution(device=device, order=order, routes={big: ("g0", "g1")}))
    assert given.transfers[1].route == ("g0", "g1") and given.transfers[1].end_ms == pytest.approx(101.001)
    assert given.start_ms[c] == pytest.approx(101.001)
    assert chosen.transfers[0] == given.transfers[0]


def test_milp_flow_route_is_traced_past_dead_ends_and_cycles() -> None:
    """A time-limited CBC incumbent may route extra flow: a dead-end branch and a cycle.

    The trace must still find the a -> b path inside the used arcs (a greedy walk that takes
    the alphabetically first arc walks into the dead end 'g1' and fails).
    """
    from types import SimpleNamespace

    from placer.errors import SolutionCheckError
    from placer.formulations.milp import _trace

    def arcs(used: set[tuple[str, str]], unused: set[tuple[str, str]] = frozenset()) -> dict:
        return {arc: SimpleNamespace(varValue=1.0 if arc in used else 0.0) for arc in used | set(unused)}

    branchy = arcs({("g0", "g1"), ("g0", "sw"), ("sw", "sw2"), ("sw2", "sw"), ("sw2", "g3")}, {("g1", "g3")})
    assert _trace(branchy, "g0", "g3", "x", "y") == ("g0", "sw", "sw2", "g3")
    with pytest.raises(SolutionCheckError, match="edge x -> y"):
        _trace(arcs({("g0", "g1")}, {("g1", "g3")}), "g0", "g3", "x", "y")
