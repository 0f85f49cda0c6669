"""The decomposition's components coupled through device loads: a valid, tighter bound."""
from __future__ import annotations

import dataclasses
import random

import pytest

from benchmarks.graphs import fully_connected_hardware, training_step
from placer.budget import Budget
from placer.chain_loads import ChainLoads, chain_loads
from placer.decompose import _solve_component, coupled_parts, decompose, orbit_representatives, solve_decomposed
from placer.engine import PlaceOptions, place
from placer.model import Problem, build_problem
from placer.schema import parse_graph, parse_hardware
from placer.validate import check_result
from tests.conftest import graph

LINE = {
    "devices": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
    "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 1.0}, {"a": "b", "b": "c", "bandwidth_gb_per_s": 0.5}],
}


def chain_with_updates(n: int, seed: int, branch_every: int = 0) -> dict:
    """A training step of an n-op forward chain, each forward op's weights updated after its
    gradient by an op in its group (the weight updates that dangle off the chain); with
    `branch_every`, every so many ops a side branch runs beside one of the chain's ops."""
    rng = random.Random(seed)
    ops = [(f"f{i}", float(rng.randint(1, 4))) for i in range(n)]
    edges = [(f"f{i}", f"f{i + 1}", rng.choice([250_000, 1_000_000, 2_000_000])) for i in range(n - 1)]
    for i in range(1, n - 1, branch_every) if branch_every else []:
        ops.append((f"b{i}", float(rng.randint(1, 4))))
        edges += [(f"f{i - 1}", f"b{i}", 4_000_000), (f"b{i}", f"f{i + 1}", 4_000_000)]
    doc = training_step(graph(ops, edges))
    for op, _ in ops:
        doc["ops"].append({"id": f"{op}_upd", "time_ms": rng.randint(1, 6) / 2, "group": op})
        doc["edges"].append({"src": f"{op}_grad", "dst": f"{op}_upd", "bytes": 0})
    return doc


def fuzz_case(seed: int) -> tuple[dict, dict]:
    """(graph, hardware) of a seed of the chain fuzz (benchmarks/reports/2026-11-26-chain-loads/
    chain_fuzz.py): a chain of 4-7 layers with updates, with or without side branches, on 2 or
    3 fully connected GPUs or a line of 3."""
    rng = random.Random(1000 + seed)
    hw_doc = [fully_connected_hardware(2, link_gb_per_s=rng.choice([0.5, 1.0, 4.0]), latency_us=0),
              fully_connected_hardware(3, link_gb_per_s=rng.choice([1.0, 2.0]), latency_us=0), LINE][seed % 3]
    n = rng.randint(4, 7)
    return chain_with_updates(n, seed, branch_every=rng.choice([0, 2, 3])), hw_doc


def _parts(p: Problem) -> ChainLoads:
    dec = decompose(p)
    assert dec is not None
    representatives = orbit_representatives(p)
    answers = [_solve_component(p, dec, comp, 5, Budget(5, deterministic=True, threads=1), None,
                                representatives=representatives) for comp in dec.components]
    assert all(a.optimal for a in answers)
    return coupled_parts(p, dec, answers, list(range(len(answers))), Budget(20, deterministic=True, threads=1), 20,
                         representatives)


def _decomposition_bound(p: Problem, parts: ChainLoads) -> float:
    return sum(p.min_time_ms(c) for c in parts.cuts) + sum(parts.bound_ms)


def _bounds_and_optimum(doc: dict, hw_doc: dict) -> tuple[float, float, float]:
    """(decomposition bound, coupled bound, exhaustive optimum) of a small graph."""
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw)
    parts = _parts(p)
    coupled = chain_loads(p, parts, Budget(10, deterministic=True, threads=1), 10)
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=1, relative_gap=0))
    assert exact.status == "optimal" and coupled is not None
    return _decomposition_bound(p, parts), coupled, exact.makespan_ms


def test_two_layers_whose_update_must_move_or_wait() -> None:
    """f0 -> f1 (2 ms each, 1 ms to move the tensor) and their gradients (4 ms each) are the
    chain, with f0's update (3 ms) last: 15 ms of time cuts, the decomposition bound. f1's
    update (3 ms) dangles: on f1's device it waits for f0's gradient (18 ms on one device),
    or f1's group moves and the chain pays two transfers (17 ms). The master sees both."""
    doc = training_step(graph([("f0", 2.0), ("f1", 2.0)], [("f0", "f1", 1_000_000)]))
    for f in ("f0", "f1"):
        doc["ops"].append({"id": f"{f}_upd", "time_ms": 3.0, "group": f})
        doc["edges"].append({"src": f"{f}_grad", "dst": f"{f}_upd", "bytes": 0})
    g, hw = parse_graph(doc), parse_hardware(fully_connected_hardware(2, link_gb_per_s=1.0, latency_us=0))
    p = build_problem(g, hw)
    parts = _parts(p)
    assert _decomposition_bound(p, parts) == pytest.approx(15.0)
    assert chain_loads(p, parts, Budget(5, deterministic=True, threads=1), 5) == pytest.approx(17.0)
    exact = place(g, hw, PlaceOptions(time_limit_s=10, threads=1, relative_gap=0))
    assert exact.status == "optimal" and exact.makespan_ms == pytest.approx(17.0)


def test_late_work_on_one_device_raises_the_bound_to_the_optimum() -> None:
    """Four layers on three GPUs (seed 49 of benchmarks/reports/2026-11-26-chain-loads/
    chain_fuzz.py): the time cuts take 27 ms, and the transfers where the chain changes device
    lift the load-only master to 30.0 ms. f1's gradient starts no earlier than 19 ms (the cuts
    before it) and 11.5 ms of work in f0's and f1's groups hangs after it (gradients 6 and 2,
    updates 3 and 0.5): the windows see when that work must run, not only where, and prove
    30.5 ms, the optimum."""
    doc, hw_doc = fuzz_case(49)
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw)
    parts = _parts(p)
    load_only = dataclasses.replace(parts, segment_bound_ms=None)
    assert chain_loads(p, load_only, Budget(5, deterministic=True, threads=1), 5) == pytest.approx(30.0)
    assert chain_loads(p, parts, Budget(5, deterministic=True, threads=1), 5) == pytest.approx(30.5)
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=1, relative_gap=0))
    assert exact.status == "optimal" and exact.makespan_ms == pytest.approx(30.5)


@pytest.mark.parametrize("seed", [30, 123])
def test_windows_over_branched_segments_stay_under_the_optimum(seed: int) -> None:
    """Chains with side branches on 2 GPUs, so the windows count segments at their bounds
    solved alone (seeds of benchmarks/reports/2026-11-26-chain-windows/window_fuzz.py): the
    windows raise the master, never above the exhaustive optimum."""
    doc, hw_doc = fuzz_case(seed)
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw)
    parts = _parts(p)
    assert parts.segment_bound_ms is not None and any(parts.segment_bound_ms)
    load_only = chain_loads(p, dataclasses.replace(parts, segment_bound_ms=None),
                            Budget(5, deterministic=True, threads=1), 5)
    windows = chain_loads(p, parts, Budget(5, deterministic=True, threads=1), 5)
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=1, relative_gap=0))
    assert exact.status == "optimal" and load_only is not None and windows is not None
    assert load_only < windows <= exact.makespan_ms + 1e-9


def test_a_switch_between_consecutive_cuts_of_one_component_is_priced_once() -> None:
    """Fuzz case 57: two consecutive time cuts whose groups one component holds, with nothing
    between them. Placed apart, the second waits for the first's tensors: the component
    prices that (placer.decompose._switches), so the bound rises (59.875 -> 60.125 ms), never
    above the exhaustive optimum (67.5), and chain_loads does not charge it a second time."""
    doc, hw_doc = fuzz_case(57)
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw)
    dec = decompose(p)
    assert len(dec.switches) == 1
    priced = solve_decomposed(p, dec, Budget(5, deterministic=True, threads=1), 5, None)
    unpriced = solve_decomposed(p, dataclasses.replace(dec, switches={}), Budget(5, deterministic=True, threads=1),
                                5, None)
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=1, relative_gap=0))
    assert exact.status == "optimal"
    assert unpriced.bound_ms < priced.bound_ms <= exact.makespan_ms + 1e-9
    assert _parts(p).priced_switches == frozenset(dec.switches)


@pytest.mark.parametrize("seed", [0, 2, 3, 5, 7, 10])
def test_the_bound_rises_and_never_exceeds_the_optimum(seed: int) -> None:
    hw_doc = [fully_connected_hardware(2, link_gb_per_s=1.0, latency_us=0),
              fully_connected_hardware(3, link_gb_per_s=2.0, latency_us=0), LINE][seed % 3]
    decomposition, coupled, optimum = _bounds_and_optimum(chain_with_updates(4 + seed % 3, seed), hw_doc)
    assert decomposition < coupled <= optimum + 1e-9


def test_engine_reports_the_coupled_bound_and_a_valid_answer() -> None:
    """A 60-op chain with side branches and updates: place() decomposes it and raises its bound
    by the master."""
    g = parse_graph(chain_with_updates(60, 0, branch_every=10))
    hw = parse_hardware(fully_connected_hardware(2, link_gb_per_s=1.0, latency_us=0))
    r = place(g, hw, PlaceOptions(time_limit_s=10, threads=1, deterministic=True))
    assert check_result(g, hw, r) == []
    coupled = r.stats.decomposition_chain_loads_ms
    assert coupled is not None and r.stats.decomposition_bound_ms is not None
    assert coupled > r.stats.decomposition_bound_ms
    assert r.stats.decomposition_bound_ms < r.lower_bound_ms <= r.makespan_ms


def test_the_coupled_bound_runs_only_where_the_components_bound_is_the_best() -> None:
    """A better bound known elsewhere (the engine's `paired_chains`, say) that the components'
    bound does not reach: the coupled bound's time goes to the components instead."""
    p = build_problem(parse_graph(chain_with_updates(60, 0, branch_every=10)),
                      parse_hardware(fully_connected_hardware(2, link_gb_per_s=1.0, latency_us=0)))
    dec = decompose(p)
    assert dec is not None
    runs = {beat: solve_decomposed(p, dec, Budget(10, deterministic=True, threads=1), 8, None, bound_to_beat_ms=beat)
            for beat in (0.0, 1e9)}
    assert runs[0.0].chain_loads_ms is not None and runs[0.0].chain_loads_ms > runs[0.0].bound_ms
    assert runs[1e9].chain_loads_ms is None


@pytest.mark.parametrize("seed", [0, 4])
def test_pinned_groups_force_switches_and_the_bound_still_holds(seed: int) -> None:
    """Two forward ops pinned to different GPUs: the chain must change device (forced extras)."""
    doc = chain_with_updates(5, seed)
    for op in doc["ops"]:
        if op["id"] in ("f1", "f3"):
            op["device"] = "gpu0" if op["id"] == "f1" else "gpu1"
    decomposition, coupled, optimum = _bounds_and_optimum(doc, fully_connected_hardware(2, link_gb_per_s=1.0,
                                                                                        latency_us=0))
    assert decomposition < coupled <= optimum + 1e-9


def test_parts_unproven_in_the_first_round_get_the_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """coupled_parts shares half its time among all its solves by ops, then what is left among
    those not yet proven (zoo ResNet-50 on the DGX-1, deterministic: a spread solve that an even
    share leaves open); nothing runs past the time given."""
    import hardware_graphs
    import placer.decompose as decompose_module
    from placer.zoo import build

    p = build_problem(parse_graph(build("resnet50")), parse_hardware(hardware_graphs.load_preset_document("dgx1_v100")))
    dec = decompose(p)
    assert dec is not None
    representatives = orbit_representatives(p)
    answers = [_solve_component(p, dec, comp, 5, Budget(5, deterministic=True, threads=1), None,
                                representatives=representatives) for comp in dec.components]
    calls: list[tuple[tuple[int, ...], tuple[int, ...], float, bool]] = []  # segments, apart, limit, proven
    real = decompose_module._solve_component

    def recording(*args: object, **kwargs: object) -> object:
        answer = real(*args, **kwargs)  # type: ignore[arg-type]
        calls.append((tuple(args[2]), tuple(kwargs.get("apart") or ()), args[3], answer.optimal))  # type: ignore
        return answer

    monkeypatch.setattr(decompose_module, "_solve_component", recording)
    seconds = 1.9
    budget = Budget(10, deterministic=True, threads=1)
    parts = coupled_parts(p, dec, answers, list(range(len(answers))), budget, seconds, representatives)
    first = calls[:16]  # 4 components of 2 segments: each spread, switched and its segments alone
    assert len({c[:2] for c in first}) == 16
    unproven = [c[:2] for c in first if not c[3]]
    assert unproven and [c[:2] for c in calls[16:]] == unproven
    first_limit = {c[:2]: c[2] for c in first}
    assert all(c[2] > first_limit[c[:2]] for c in calls[16:])
    assert budget.spent() <= seconds + 0.1
    assert all(s >= a.bound_ms for s, a in zip(parts.spread_bound_ms, answers, strict=True))
