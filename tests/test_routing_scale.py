"""Lazy, bounded routing (issue 11): the same routes as the exhaustive Pareto search, computed
only for the sources asked, with label sets bounded by the rules in placer.routing."""
from __future__ import annotations

import heapq
import random
from typing import Any

import pytest

from placer.model import build_problem
from placer.resolve import load_preset
from placer.routing import Router
from placer.schema import HardwareSpec, parse_graph, parse_hardware

SIZES = (0, 1, 1e3, 1e5, 1e6, 3e7, 1e8, 1e10, 1e13)


def exhaustive_fronts(hardware: HardwareSpec, src: str) -> dict[str, list[tuple[float, float, tuple[str, ...]]]]:
    """Every Pareto-optimal simple path from src (the label setting placer.routing used before
    issue 11, kept here as the reference): (ms per byte, latency ms, path) per node."""
    adjacent: dict[str, list[str]] = {d.id: [] for d in hardware.devices} | {s.id: [] for s in hardware.switches}
    cost: dict[frozenset[str], tuple[float, float]] = {}
    for link in hardware.links:
        adjacent[link.a].append(link.b)
        adjacent[link.b].append(link.a)
        cost[frozenset((link.a, link.b))] = (1.0 / (link.bandwidth_gb_per_s * 1e9) * 1e3, link.latency_us * 1e-3)
    fronts: dict[str, list[tuple[float, float, tuple[str, ...]]]] = {n: [] for n in adjacent}
    fronts[src].append((0.0, 0.0, (src,)))
    heap = [(0.0, 0.0, 1, (src,))]
    while heap:
        m, lat, _, path = heapq.heappop(heap)
        if (m, lat, path) not in fronts[path[-1]]:
            continue
        for nxt in sorted(adjacent[path[-1]]):
            if nxt in path:
                continue
            dm, dl = cost[frozenset((path[-1], nxt))]
            cand = (m + dm, lat + dl, path + (nxt,))
            front = fronts[nxt]
            if any(o[0] <= cand[0] and o[1] <= cand[1] for o in front):
                continue
            front[:] = [o for o in front if not (cand[0] <= o[0] and cand[1] <= o[1])]
            front.append(cand)
            heapq.heappush(heap, (cand[0], cand[1], len(cand[2]), cand[2]))
    return fronts


def reference_route(fronts: dict, size: float, dst: str) -> tuple[float, tuple[str, ...]]:
    m, lat, path = min(fronts[dst], key=lambda f: (size * f[0] + f[1], len(f[2]), f[2]))
    return size * m + lat, path


def mesh(n: int, seed: int | None = None, density: float = 1.0) -> dict[str, Any]:
    """A full mesh of n GPUs (uniform links), or with seed a random mix of links."""
    rng = random.Random(seed)
    devs = [f"gpu{i}" for i in range(n)]
    links = []
    for i, a in enumerate(devs):
        for b in devs[i + 1:]:
            if seed is None:
                links.append({"a": a, "b": b, "bandwidth_gb_per_s": 25.0, "latency_us": 5.0})
            elif rng.random() < density:
                links.append({"a": a, "b": b, "bandwidth_gb_per_s": round(rng.uniform(1, 100), 3),
                              "latency_us": round(rng.uniform(1, 50), 3)})
    return {"format": "placer.hardware/v1", "name": f"mesh{n}", "devices": [{"id": d} for d in devs],
            "links": links}


def assert_same_as_exhaustive(hw: HardwareSpec, router: Router, sources: list[str]) -> None:
    for a in sources:
        fronts = exhaustive_fronts(hw, a)
        for b in router.devices:
            if b == a:
                continue
            for size in SIZES:
                delay, path = reference_route(fronts, size, b)
                assert router.route(size, a, b) == path, (a, b, size)
                assert router.delay_ms(size, a, b) == delay, (a, b, size)


def test_64_gpu_mesh_routes_equal_the_exhaustive_answer_for_sampled_sources() -> None:
    hw = parse_hardware(mesh(64))
    router = Router(hw)
    assert_same_as_exhaustive(hw, router, ["gpu0", "gpu17", "gpu63"])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_mixed_links_routes_equal_the_exhaustive_answer(seed: int) -> None:
    """Random bandwidths and latencies give fronts of several paths, some off the lower
    envelope (rule 2 drops them): routes and delays must not change."""
    hw = parse_hardware(mesh(20, seed=seed, density=0.6))
    router = Router(hw)
    assert_same_as_exhaustive(hw, router, list(router.devices))


@pytest.mark.parametrize("name", ["dgx1_v100", "dgx2_v100", "pcie_4gpu_workstation", "two_node_v100_ib"])
def test_preset_routes_equal_the_exhaustive_answer(name: str) -> None:
    hw = load_preset(name)
    router = Router(hw)
    assert_same_as_exhaustive(hw, router, list(router.devices))


def test_routes_are_computed_per_source_on_demand() -> None:
    problem = build_problem(parse_graph({"ops": [{"id": "a", "time_ms": 1}, {"id": "b", "time_ms": 1}],
                                         "edges": [{"src": "a", "dst": "b", "bytes": 1000}]}),
                            parse_hardware(mesh(64)))
    assert problem.router.sources_computed == 0  # building a problem (request validation) routes nothing
    problem.router.delay_ms(1e6, "gpu3", "gpu9")
    problem.router.route(1e3, "gpu3", "gpu40")
    assert problem.router.sources_computed == 1
    problem.router.delay_ms(1e6, "gpu9", "gpu3")
    assert problem.router.sources_computed == 2
    assert Router(problem.hardware).sources_computed == 0  # caches belong to one instance


def fan_of_paths(k: int) -> dict[str, Any]:
    """k two-hop paths from s to t through switches, with costs on a strictly convex curve:
    path i is the fastest for a range of sizes, so the lower envelope has k paths."""
    links = []
    for i in range(k):
        bw = 2.0 ** i                      # GB/s: later paths fatter...
        lat = 1.0 + 4.0 * i * i            # ...and slower to start (convex)
        links += [{"a": "s", "b": f"sw{i}", "bandwidth_gb_per_s": bw, "latency_us": lat},
                  {"a": f"sw{i}", "b": "t", "bandwidth_gb_per_s": bw, "latency_us": lat}]
    return {"devices": [{"id": "s"}, {"id": "t"}], "switches": [{"id": f"sw{i}"} for i in range(k)],
            "links": links}


def test_label_cap_keeps_real_routes_and_exact_extremes() -> None:
    hw = parse_hardware(fan_of_paths(10))
    exact, capped = Router(hw), Router(hw, max_labels=4)
    assert len(exact.cost_profile("s", "t")) == 10   # below the default cap: every envelope path kept
    assert len(capped.cost_profile("s", "t")) == 4
    sizes = [10.0 ** p for p in range(14)]
    fronts = exhaustive_fronts(hw, "s")
    assert [exact.delay_ms(x, "s", "t") for x in sizes] == [reference_route(fronts, x, "t")[0] for x in sizes]
    for x in sizes:
        route = capped.route(x, "s", "t")
        real = sum(x / (lk.bandwidth_gb_per_s * 1e9) * 1e3 + lk.latency_us * 1e-3 for lk in hw.links
                   if {lk.a, lk.b} <= set(route))
        assert capped.delay_ms(x, "s", "t") == pytest.approx(real, rel=1e-12)   # a real route's delay
        assert capped.delay_ms(x, "s", "t") >= exact.delay_ms(x, "s", "t")
    assert capped.route(0, "s", "t") == exact.route(0, "s", "t") == ("s", "sw0", "t")      # least latency
    assert capped.route(1e15, "s", "t") == exact.route(1e15, "s", "t") == ("s", "sw9", "t")  # fattest
    assert any(capped.delay_ms(x, "s", "t") > exact.delay_ms(x, "s", "t") for x in sizes)


def test_paths_off_the_lower_envelope_are_dropped() -> None:
    """Three s -> t paths, all Pareto-optimal; the middle one is never the fastest for any size."""
    hw = parse_hardware({
        "devices": [{"id": "s"}, {"id": "t"}], "switches": [{"id": "x"}, {"id": "y"}],
        "links": [{"a": "s", "b": "t", "bandwidth_gb_per_s": 1.0, "latency_us": 1.0},
                  {"a": "s", "b": "x", "bandwidth_gb_per_s": 3.0, "latency_us": 50.0},
                  {"a": "x", "b": "t", "bandwidth_gb_per_s": 3.0, "latency_us": 50.0},
                  {"a": "s", "b": "y", "bandwidth_gb_per_s": 100.0, "latency_us": 60.0},
                  {"a": "y", "b": "t", "bandwidth_gb_per_s": 100.0, "latency_us": 60.0}],
    })
    fronts = exhaustive_fronts(hw, "s")
    assert len(fronts["t"]) == 3
    router = Router(hw)
    assert len(router.cost_profile("s", "t")) == 2
    for x in [10.0 ** p for p in range(12)] + [5e4, 1e5, 2e5]:
        assert router.route(x, "s", "t") == reference_route(fronts, x, "t")[1]
        assert router.route(x, "s", "t") != ("s", "x", "t")


def test_max_labels_below_two_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        Router(parse_hardware(mesh(2)), max_labels=1)


def test_delays_from_one_source_equal_the_pairwise_delays() -> None:
    """delays_ms (used by the bounds and HEFT's averages) gives exactly delay_ms's numbers."""
    for hw in (load_preset("two_node_v100_ib"), parse_hardware(mesh(16, seed=3, density=0.5))):
        router = Router(hw)
        for size in (0, 1, 4096, 12_345_678, 1e12):
            for a in router.devices:
                assert router.delays_ms(size, a).tolist() == [router.delay_ms(size, a, b) for b in router.devices]
