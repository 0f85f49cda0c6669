"""Properties on random graphs: every answer valid, bound <= makespan <= one device, optimum <= HEFT."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from placer.engine import PlaceOptions, place
from placer.schema import parse_graph, parse_hardware
from placer.validate import check_result
from tests.conftest import EXACT, fully_connected


@st.composite
def dags(draw: st.DrawFn, max_ops: int = 9) -> dict:
    """Random DAGs valid by construction: edges run from lower to higher index."""
    n = draw(st.integers(1, max_ops))
    ops = [{"id": f"op{i}", "time_ms": draw(st.floats(0.0, 5.0).map(lambda x: round(x, 3))),
            "memory_bytes": draw(st.integers(0, 4))} for i in range(n)]
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=14)) if pairs else []
    edges = [{"src": f"op{i}", "dst": f"op{j}", "bytes": draw(st.integers(0, 3_000_000))} for i, j in chosen]
    if n >= 2 and draw(st.booleans()):
        ops[0]["group"] = ops[1]["group"] = "g"
    return {"ops": ops, "edges": edges}


def _check(doc: dict, hw_doc: dict, solver: str) -> None:
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    r = place(g, hw, PlaceOptions(solver=solver, time_limit_s=10, threads=1))
    assert r.status in ("optimal", "infeasible"), r.status
    if r.status == "infeasible":
        return
    assert check_result(g, hw, r) == []
    assert r.lower_bound_ms <= r.makespan_ms + 1e-9
    baselines = r.baselines.model_dump()
    if r.single_device_ms is not None:
        assert r.makespan_ms <= r.single_device_ms + 1e-9
    for name in ("heft_ms", "critical_path_ms"):
        if baselines[name] is not None:
            assert r.makespan_ms <= baselines[name] + 1e-9
    assert abs(r.simulation.makespan_ms - r.makespan_ms) <= 1e-9 * max(1, r.makespan_ms)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dags(), n_devices=st.integers(1, 3), memory=st.sampled_from([None, 6, 12]))
def test_cpsat_answers_are_valid_and_between_the_bounds(doc: dict, n_devices: int, memory: int | None) -> None:
    hw = fully_connected(n_devices, bandwidth_gb_per_s=1.0, latency_us=10.0,
                         **({"memory_bytes": memory} if memory else {}))
    _check(doc, hw, "cpsat")


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dags(max_ops=6))
def test_milp_back_ends_agree_with_cpsat(doc: dict) -> None:
    hw = fully_connected(2, bandwidth_gb_per_s=1.0)
    g, h = parse_graph(doc), parse_hardware(hw)
    spans = {}
    for solver in EXACT:
        r = place(g, h, PlaceOptions(solver=solver, time_limit_s=20, threads=1))
        assert r.status == "optimal", solver
        spans[solver] = r.makespan_ms
    # CP-SAT rounds non-round times up to ticks, so agreement is to the tick size
    assert max(spans.values()) - min(spans.values()) <= 1e-6 * max(1.0, max(spans.values())), spans


@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
@given(doc=dags(), n_devices=st.integers(1, 3), data=st.data())
def test_decoding_starts_gives_back_the_schedule(doc: dict, n_devices: int, data: st.DataObject) -> None:
    """Any schedule's start times decode (placer.schedule.solution_from_starts) to orders
    that re-time no later, also with solver-sized noise (1e-7 ms) on every start."""
    from placer.model import build_problem
    from placer.schedule import Solution, retime, solution_from_starts

    for op in doc["ops"]:
        op.pop("group", None)
    p = build_problem(parse_graph(doc), parse_hardware(fully_connected(n_devices, latency_us=1.0)))
    device = [data.draw(st.integers(0, n_devices - 1)) for _ in range(p.n_ops)]
    topo = data.draw(st.permutations(range(p.n_ops)).map(lambda perm: _topological(p, perm)))
    order = [[k for k in topo if device[k] == d] for d in range(n_devices)]
    exact = retime(p, Solution(device=device, order=order))
    noise = [data.draw(st.sampled_from([-1e-7, 0.0, 1e-7])) for _ in range(p.n_ops)]
    for starts, slack in ((exact.start_ms, 1e-12), ([s + x for s, x in zip(exact.start_ms, noise)], 1e-6)):
        decoded = retime(p, solution_from_starts(p, device, starts))
        assert decoded.makespan_ms <= exact.makespan_ms + slack


def _topological(p, priority: list[int]) -> list[int]:  # noqa: ANN001
    """The topological order of p's ops that takes the ready op first in `priority`."""
    rank = {k: i for i, k in enumerate(priority)}
    done: list[int] = []
    waiting = [len(p.preds[k]) for k in range(p.n_ops)]
    ready = [k for k in range(p.n_ops) if waiting[k] == 0]
    while ready:
        k = min(ready, key=rank.__getitem__)
        ready.remove(k)
        done.append(k)
        for i in p.succs[k]:
            v = p.edges[i].dst
            waiting[v] -= 1
            if waiting[v] == 0:
                ready.append(v)
    return done
