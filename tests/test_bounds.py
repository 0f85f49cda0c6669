"""Lower bounds: never above an exact optimum, and each named bound equal to a hand computation.

Validity is checked against the exhaustive reference (tests/reference.py) on small random
instances with fixed seeds -- colocation groups, pins, memory, heterogeneous devices, zero
durations, 1 to 3 devices -- and against the known optima of the classic benchmarks.
"""
from __future__ import annotations

import json
import math
import random
import time
from pathlib import Path
from typing import Any

import pytest

from placer import bounds
from placer.bounds import (
    bound_breakdown,
    communication_bound_ms,
    critical_path_ms,
    lower_bound_ms,
    work_bound_ms,
)
from placer.model import Problem, build_problem
from placer.schema import parse_graph, parse_hardware
from tests.conftest import fully_connected, graph
from tests.reference import brute_force_makespan

CLASSIC = Path(__file__).resolve().parent / "data" / "classic"
FORBIDDEN_MS = 1e6  # a pinned op's time on the other devices in the reference's tables
TOL = 1e-6


def _problem(g: dict, hw: dict) -> Problem:
    return build_problem(parse_graph(g), parse_hardware(hw))


def _line(n: int, latency_us: float = 0.0) -> dict:
    """n devices in a row, 1 GB/s links: a transfer crosses |a - b| links."""
    return {"devices": [{"id": f"gpu{i}", "peak_tflops": 1.0} for i in range(n)],
            "links": [{"a": f"gpu{i}", "b": f"gpu{i + 1}", "bandwidth_gb_per_s": 1.0, "latency_us": latency_us}
                      for i in range(n - 1)]}


def _random_case(seed: int) -> tuple[dict, dict, dict[str, Any]]:
    """A small instance as placer documents and as the reference's plain tables."""
    rng = random.Random(seed)
    m = [1, 2, 2, 3][seed % 4]
    n = rng.randint(3, 6 if m == 3 else 7)
    topology = rng.choice(["full", "line"]) if m == 3 else "full"
    speeds = [rng.choice([1.0, 1.0, 2.0]) for _ in range(m)]  # peak TFLOPS: time = work / speed
    work = [rng.choice([0, 1, 2, 3, 4, 5, 6]) for _ in range(n)]
    edges = [(u, v, rng.choice([0, 1, 2, 3]) * 1_000_000) for u in range(n) for v in range(u + 1, n)
             if rng.random() < 0.4]
    group_of = list(range(n))
    for _ in range(rng.choice([0, 1, 2])):
        a, b = rng.sample(range(n), 2)
        group_of[b] = group_of[a]
    pins: dict[int, int] = {}
    if m > 1 and rng.random() < 0.3:
        pins[rng.choice(group_of)] = rng.randrange(m)
    memory = [rng.choice([0, 1, 2, 3]) for _ in range(n)] if rng.random() < 0.4 else [0] * n
    capacity = max(sum(memory) // m + 2, max(memory)) if any(memory) else None

    ops = []
    for k in range(n):
        op: dict[str, Any] = {"id": f"o{k}", "flops": work[k] * 1e9, "memory_bytes": memory[k]}
        if group_of.count(group_of[k]) > 1:
            op["group"] = f"g{group_of[k]}"
        if group_of[k] in pins:
            op["device"] = f"gpu{pins[group_of[k]]}"
        ops.append(op)
    g = {"format": "placer.graph/v1", "name": f"random-{seed}", "ops": ops,
         "edges": [{"src": f"o{u}", "dst": f"o{v}", "bytes": b} for u, v, b in edges]}
    if topology == "line":
        hw = _line(m)
    else:
        hw = fully_connected(m, peak_tflops=1.0)
    for d, s in enumerate(speeds):
        hw["devices"][d]["peak_tflops"] = s
        if capacity is not None:
            hw["devices"][d]["memory_bytes"] = capacity

    def delay(size: float, a: int, b: int) -> float:
        return (abs(a - b) if topology == "line" else 1) * size / 1e6

    groups = [[k for k in range(n) if group_of[k] == g] for g in sorted(set(group_of))]
    times = [[work[k] / speeds[d] if group_of[k] not in pins or pins[group_of[k]] == d else FORBIDDEN_MS
              for d in range(m)] for k in range(n)]
    tables = {"times": times, "edges": edges, "delay": delay, "groups": [x for x in groups if len(x) > 1],
              "memory": memory if capacity is not None else (), "capacity": [capacity] * m if capacity else ()}
    return g, hw, tables


@pytest.mark.parametrize("seed", range(160))
def test_no_bound_exceeds_the_exhaustive_optimum(seed: int) -> None:
    g, hw, t = _random_case(seed)
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
    if optimum is None:
        pytest.skip("no placement fits memory")
    assert optimum < FORBIDDEN_MS
    breakdown = bound_breakdown(_problem(g, hw))
    for name, value in breakdown.items():
        assert math.isfinite(value) and value <= optimum + TOL, (name, value, optimum)


def _mirror_case(seed: int) -> tuple[dict, dict, dict[str, Any]]:
    """Forward and backward copies of a small DAG, op i of each copy in group i (the msr
    layer graphs' shape); sometimes an edge from forward to backward, a pin or memory."""
    rng = random.Random(seed)
    m = rng.choice([2, 2, 3])
    k = rng.randint(2, 3 if m == 3 else 4)
    shape = [(u, v) for u in range(k) for v in range(u + 1, k) if v == u + 1 or rng.random() < 0.3]
    work = [float(rng.randint(0, 5)) for _ in range(2 * k)]
    edges = sorted([(u, v, rng.choice([0, 1, 2]) * 1_000_000) for u, v in shape]
                   + [(k + u, k + v, rng.choice([0, 1, 2]) * 1_000_000) for u, v in shape]
                   + ([(k - 1, k, 1_000_000)] if rng.random() < 0.3 else []))
    pin = rng.randrange(k) if rng.random() < 0.2 else None
    memory = [rng.choice([1, 2]) for _ in range(2 * k)] if rng.random() < 0.3 else [0] * (2 * k)
    capacity = max(sum(memory) // m + 2, 4) if any(memory) else None
    ops = [{"id": f"o{i}", "time_ms": work[i], "group": f"g{i % k}", "memory_bytes": memory[i],
            **({"device": "gpu0"} if i % k == pin else {})} for i in range(2 * k)]
    g = {"format": "placer.graph/v1", "name": f"mirror-{seed}", "ops": ops,
         "edges": [{"src": f"o{u}", "dst": f"o{v}", "bytes": b} for u, v, b in edges]}
    hw = fully_connected(m, **({"memory_bytes": capacity} if capacity else {}))
    times = [[work[i] if i % k != pin or d == 0 else FORBIDDEN_MS for d in range(m)] for i in range(2 * k)]
    tables = {"times": times, "edges": edges, "delay": lambda size, a, b: size / 1e6,
              "groups": [[i, k + i] for i in range(k)], "memory": memory if capacity else (),
              "capacity": [capacity] * m if capacity else ()}
    return g, hw, tables


@pytest.mark.parametrize("seed", range(80))
def test_no_bound_exceeds_the_optimum_of_forward_backward_copies(seed: int) -> None:
    _assert_no_bound_exceeds_the_optimum(*_mirror_case(seed))


def _assert_no_bound_exceeds_the_optimum(g: dict, hw: dict, t: dict[str, Any]) -> None:
    optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
    if optimum is None:
        pytest.skip("no placement fits memory")
    for name, value in bound_breakdown(_problem(g, hw)).items():
        assert value <= optimum + TOL, (name, value, optimum)


def _shortcut_case(seed: int) -> tuple[dict, dict, dict[str, Any]]:
    """Two copies of a chain a -> b -> c with a shortcut op a -> s -> c beside it (a residual
    block's branch: a little shorter than b, its tensors large), the copies in the same order and op
    i of each in group i (msr-fiddle's layer graphs), on 2 or 3 devices: the side ops that
    the paired chains' blocks charge (`_side_ms`)."""
    rng = random.Random(seed)
    m = rng.choice([2, 2, 3])
    a, b, c, s = range(4)
    work = [float(rng.randint(1, 2)), float(rng.randint(3, 4)), float(rng.randint(1, 2))]
    work.append(work[b] - rng.choice([0.5, 1.0]))
    work += [rng.choice([0.25, 0.5]) * x for x in work]  # the second copy, lighter
    shape = [(a, b, rng.randint(2, 5)), (b, c, rng.randint(2, 5)), (a, s, rng.randint(6, 10)),
             (s, c, rng.randint(6, 10))]
    edges = sorted((copy + u, copy + v, mb * 1_000_000) for copy in (0, 4) for u, v, mb in shape)
    ops = [{"id": f"o{x}", "time_ms": work[x], "group": f"g{x % 4}"} for x in range(8)]
    g = {"format": "placer.graph/v1", "name": f"shortcut-{seed}", "ops": ops,
         "edges": [{"src": f"o{u}", "dst": f"o{v}", "bytes": size} for u, v, size in edges]}
    tables = {"times": [[x] * m for x in work], "edges": edges, "delay": lambda size, a, b: size / 1e6,
              "groups": [[i, 4 + i] for i in range(4)], "memory": (), "capacity": ()}
    return g, fully_connected(m), tables


@pytest.mark.parametrize("seed", range(40))
def test_no_bound_exceeds_the_optimum_of_chains_with_shortcuts(seed: int) -> None:
    _assert_no_bound_exceeds_the_optimum(*_shortcut_case(seed))


def test_the_shortcut_cases_exercise_the_side_ops(monkeypatch: pytest.MonkeyPatch) -> None:
    """The side ops raise the paired chains on some of the cases above (else the soundness
    test would not test them), and never lower them."""
    with_side = [bound_breakdown(_problem(*_shortcut_case(seed)[:2]))["paired_chains"] for seed in range(40)]
    monkeypatch.setattr(bounds, "_MAX_SIDE_CHAIN", 0)
    without = [bound_breakdown(_problem(*_shortcut_case(seed)[:2]))["paired_chains"] for seed in range(40)]
    assert all(x >= y - TOL for x, y in zip(with_side, without, strict=True))
    assert sum(x > y + TOL for x, y in zip(with_side, without, strict=True)) >= 5


def _branch_case(seed: int) -> tuple[dict, dict, dict[str, Any]]:
    """A chain of 4 or 5 ops with one or two branch ops beside it (each from a chain op to a
    later one, about as long as the chain between them, its tensors large), on 2 or 3
    devices: the side ops that the path blocks charge (`_side_ms`)."""
    rng = random.Random(seed)
    m = rng.choice([2, 2, 3])
    n = rng.randint(4, 5)
    times = [float(rng.randint(1, 4)) for _ in range(n)]
    edges = [(i, i + 1, rng.randint(0, 2) * 1_000_000) for i in range(n - 1)]
    order = list(range(n))
    for _ in range(rng.choice([1, 1, 2])):
        src = rng.randrange(0, n - 2)
        dst = rng.randrange(src + 2, n)
        side = len(times)
        times.append(max(0.5, sum(times[src + 1:dst]) - rng.choice([0.0, 0.5, 1.0])))
        edges += [(src, side, rng.randint(2, 6) * 1_000_000), (side, dst, rng.randint(2, 6) * 1_000_000)]
        order.insert(order.index(src) + 1, side)  # the graph's op order stays topological
    ops = [{"id": f"o{x}", "time_ms": times[x]} for x in order]
    g = {"format": "placer.graph/v1", "name": f"branch-{seed}", "ops": ops,
         "edges": [{"src": f"o{u}", "dst": f"o{v}", "bytes": b} for u, v, b in edges]}
    tables = {"times": [[t] * m for t in times], "edges": edges, "delay": lambda size, a, b: size / 1e6,
              "groups": [], "memory": (), "capacity": ()}
    return g, fully_connected(m), tables


@pytest.mark.parametrize("seed", range(60))
def test_no_bound_exceeds_the_optimum_of_chains_with_branches(seed: int) -> None:
    _assert_no_bound_exceeds_the_optimum(*_branch_case(seed))


def test_the_branch_cases_exercise_the_side_ops_of_the_path_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The side ops raise the path blocks on some of the cases above, and never lower them."""
    with_side = [bound_breakdown(_problem(*_branch_case(seed)[:2]))["path_blocks"] for seed in range(60)]
    monkeypatch.setattr(bounds, "_MAX_SIDE_CHAIN", 0)
    without = [bound_breakdown(_problem(*_branch_case(seed)[:2]))["path_blocks"] for seed in range(60)]
    assert all(x >= y - TOL for x, y in zip(with_side, without, strict=True))
    assert sum(x > y + TOL for x, y in zip(with_side, without, strict=True)) >= 10


def test_path_blocks_keep_a_branch_beside_the_path_on_its_device() -> None:
    """Two branches of two 1 ms ops between s and j, 10 ms per tensor (tests/test_cone_bounds):
    the branch off the path runs beside it or pays 20 ms of transfers, so the path blocks see
    the optimum, all six ops on one device; the heads alone see 5 ms."""
    from tests.test_cone_bounds import _two_branches

    breakdown = bound_breakdown(_problem(*_two_branches()))
    assert breakdown["path_blocks"] == pytest.approx(6.0)
    assert breakdown["communication"] == pytest.approx(5.0)


def _switch_case(seed: int) -> tuple[dict, dict, dict[str, Any]]:
    """A forward chain and its backward chain joined into one path (groups {f_i, b_i}, now
    and then a backward op in a group of its own), plus one or two side ops, each in a path
    group, from a path op to a later one: the ops a device may have to run inside the path
    (the switch cover's and the path blocks' cases)."""
    rng = random.Random(seed)
    m = rng.choice([2, 2, 3])
    k = rng.randint(2, 3)
    names = [f"f{i}" for i in range(k)] + [f"b{i}" for i in reversed(range(k))]
    times = [float(rng.randint(0, 4)) for _ in names]
    edges = [(i, i + 1, rng.choice([0, 1, 2, 3]) * 1_000_000) for i in range(2 * k - 1)]
    groups = [[i, 2 * k - 1 - i] for i in range(k)]
    if rng.random() < 0.3:
        g = rng.randrange(k)
        groups[g].remove(2 * k - 1 - g)
        groups.append([2 * k - 1 - g])
    order = list(range(2 * k))
    for _ in range(rng.choice([1, 1, 2])):
        g = rng.randrange(len(groups))
        src = rng.randrange(0, 2 * k - 2)
        dst = rng.randrange(src + 2, 2 * k)
        names.append(f"s{len(names)}")
        times.append(float(rng.randint(1, 4)))
        side = len(names) - 1
        edges += [(src, side, rng.choice([0, 1, 2]) * 1_000_000), (side, dst, rng.choice([0, 1, 2]) * 1_000_000)]
        groups[g].append(side)
        order.insert(order.index(src) + 1, side)  # the graph's op order stays topological
    group_of = {x: gi for gi, gs in enumerate(groups) for x in gs}
    ops = [{"id": names[x], "time_ms": times[x], "group": f"g{group_of[x]}"} for x in order]
    g = {"format": "placer.graph/v1", "name": f"switch-{seed}", "ops": ops,
         "edges": [{"src": names[u], "dst": names[v], "bytes": b} for u, v, b in edges]}
    tables = {"times": [[t] * m for t in times], "edges": edges, "delay": lambda size, a, b: size / 1e6,
              "groups": [x for x in groups if len(x) > 1], "memory": (), "capacity": ()}
    return g, fully_connected(m), tables


@pytest.mark.parametrize("seed", range(80))
def test_no_bound_exceeds_the_optimum_of_paths_with_ops_inside(seed: int) -> None:
    _assert_no_bound_exceeds_the_optimum(*_switch_case(seed))


def _classic(path: Path) -> tuple[Problem, float]:
    doc = json.loads(path.read_text())
    hw = fully_connected(doc["processors"], bandwidth_gb_per_s=1.0, latency_us=0.0)
    return _problem(doc["graph"], hw), float(doc["optimum"])


@pytest.mark.parametrize("path", sorted(CLASSIC.glob("*.json")), ids=lambda p: p.stem)
def test_no_bound_exceeds_a_classic_optimum(path: Path) -> None:
    problem, optimum = _classic(path)
    for name, value in bound_breakdown(problem).items():
        assert value <= optimum + TOL, (name, value, optimum)


def test_the_public_bounds_are_the_named_ones() -> None:
    problem, _ = _classic(CLASSIC / "nodes_10_random_p4.json")
    b = bound_breakdown(problem)
    assert lower_bound_ms(problem) == max(b.values())
    assert critical_path_ms(problem) == b["critical_path"]
    assert communication_bound_ms(problem) == b["communication"]
    assert work_bound_ms(problem) == max(b["work"], b["largest_group"], b["pinned"])


# --- each new bound on a hand-made instance -----------------------------------------------

def _with_groups(g: dict, groups: dict[str, str]) -> dict:
    for op in g["ops"]:
        if op["id"] in groups:
            op["group"] = groups[op["id"]]
    return g


OLD = ("critical_path", "communication", "work", "largest_group", "pinned")  # the bounds before groups counted


def _assert_beats_old(breakdown: dict[str, float], name: str, value: float) -> None:
    assert breakdown[name] == pytest.approx(value)
    assert lower_bound_ms_of(breakdown) == pytest.approx(value)
    assert all(breakdown[k] < value - 1e-9 for k in OLD), breakdown


def lower_bound_ms_of(breakdown: dict[str, float]) -> float:
    return max(breakdown.values())


def _optimum_of(ops: list[tuple[str, float]], edges: list[tuple[str, str, int]], groups: dict[str, str],
                devices: int) -> float:
    """The exhaustive optimum of a hand-made case on `devices` devices with 1 GB/s links."""
    index = {name: k for k, (name, _) in enumerate(ops)}
    return brute_force_makespan([[t] * devices for _, t in ops], [(index[a], index[b], size) for a, b, size in edges],
                                lambda size, a, b: size / 1e6,
                                groups=[[index[x] for x in groups if groups[x] == g] for g in sorted(set(groups.values()))])


def test_communication_serialises_inputs_of_one_group() -> None:
    """a (2 ms) feeds b and c (4 ms each), one group; a transfer costs 1 ms; 2 devices.

    b and c run one after the other on their device: after a, either 4 + 4 (there) or
    1 + 4 + 4 (elsewhere), so a's tail is 8 and the bound 2 + 8 = 10, the optimum (all on
    one device). Treated apart, b and c would each need only 1 + 4 after a: 7.
    """
    fork = graph([("a", 2.0), ("b", 4.0), ("c", 4.0)], [("a", "b", 1_000_000), ("a", "c", 1_000_000)])
    assert communication_bound_ms(_problem(fork, fully_connected(2))) == pytest.approx(7.0)
    g = _with_groups(fork, {"b": "bc", "c": "bc"})
    assert communication_bound_ms(_problem(g, fully_connected(2))) == pytest.approx(10.0)
    assert brute_force_makespan([[2, 2], [4, 4], [4, 4]], [(0, 1, 1e6), (0, 2, 1e6)],
                                lambda s, a, b: s / 1e6, groups=[[1, 2]]) == pytest.approx(10.0)


def test_communication_charges_the_transfer_that_memory_forces() -> None:
    """a -> b (2 ms each), 8 bytes each on 12-byte devices, a 5 ms transfer: no device holds
    both, so b waits for a's tensor: 2 + 5 + 2 = 9, the optimum (without memory, 4)."""
    g = graph([("a", 2.0, 8), ("b", 2.0, 8)], [("a", "b", 5_000_000)])
    assert communication_bound_ms(_problem(g, fully_connected(2))) == pytest.approx(4.0)
    assert communication_bound_ms(_problem(g, fully_connected(2, memory_bytes=12))) == pytest.approx(9.0)
    assert brute_force_makespan([[2, 2], [2, 2]], [(0, 1, 5e6)], lambda s, a, b: s / 1e6,
                                memory=[8, 8], capacity=[12, 12]) == pytest.approx(9.0)


def test_group_machine_runs_a_group_on_one_device() -> None:
    """x and y (2 ms, one group) each feed a 5 ms op; no transfer costs anything; 2 devices.

    One device runs x and y back to back, so the second ends at 4 and its successor at 9:
    Jackson's preemptive schedule on the group gives 2 + 2 + 5 = 9, the optimum. The
    critical path is 7, total work / 2 is 7. (Packing the groups {x, y}, {b}, {c} on two
    devices also gives 5 + 4, and the paired chains x -> b, y give 9 as well.)
    """
    g = _with_groups(graph([("x", 2.0), ("y", 2.0), ("b", 5.0), ("c", 5.0)], [("x", "b", 0), ("y", "c", 0)]),
                     {"x": "xy", "y": "xy"})
    _assert_beats_old(bound_breakdown(_problem(g, fully_connected(2))), "group_machine", 9.0)
    assert brute_force_makespan([[2, 2], [2, 2], [5, 5], [5, 5]], [(0, 2, 0), (1, 3, 0)],
                                lambda s, a, b: 0.0, groups=[[0, 1]]) == pytest.approx(9.0)


def test_path_blocks_charge_a_split_path_and_the_work_of_its_groups() -> None:
    """Critical path a -> b -> c (1, 1, 3 ms); w (3 ms) also follows a and shares b's group;
    transfers cost 1 ms; 2 devices.

    One device for the path runs w too: 8. Split after b: 1 + 1 + 1 + 3 = 6. Split after a:
    the device of b also runs w after a, and c: 1 + max(1 + 1 + 3, 1 + 3 + 3) = 8. Split
    twice: 1 + 1 + 1 + 1 + 3 = 7. So 6, the optimum; the bounds without groups stay at 5.
    """
    g = _with_groups(graph([("a", 1.0), ("b", 1.0), ("w", 3.0), ("c", 3.0)],
                           [("a", "b", 1_000_000), ("a", "w", 1_000_000), ("b", "c", 1_000_000)]),
                     {"b": "bw", "w": "bw"})
    _assert_beats_old(bound_breakdown(_problem(g, fully_connected(2))), "path_blocks", 6.0)
    assert brute_force_makespan([[1, 1], [1, 1], [3, 3], [3, 3]], [(0, 1, 1e6), (0, 2, 1e6), (1, 3, 1e6)],
                                lambda s, a, b: s / 1e6, groups=[[1, 2]]) == pytest.approx(6.0)


def test_path_blocks_charge_the_ops_their_device_runs_between_two_path_ops() -> None:
    """A residual block's backward pass: r feeds i0 (0.5 ms, on the critical path) and i1
    (2 ms, off it), one group; i0 -> m1 -> m2 -> acc (2, 2, 1 ms), and i1 -> acc. Before r
    comes s (1 ms), after acc comes t (5 ms), both joined by empty tensors; every other
    transfer costs 1 ms; 2 devices.

    The path takes 12.5 ms. Staying on i0's device until acc, that device also runs i1
    before acc: 14.5. Leaving it right after i0 costs a transfer: 13.5, the optimum. The
    free splits at the empty tensors change nothing (i1 still runs between r and acc on
    i0's device), but before i1 was counted inside its block, path blocks gave 12.5.
    """
    ops = [("s", 1.0), ("r", 1.0), ("i0", 0.5), ("i1", 2.0), ("m1", 2.0), ("m2", 2.0), ("acc", 1.0), ("t", 5.0)]
    edges = [("s", "r", 0), ("r", "i0", 1_000_000), ("r", "i1", 1_000_000), ("i0", "m1", 1_000_000),
             ("m1", "m2", 1_000_000), ("m2", "acc", 1_000_000), ("i1", "acc", 1_000_000), ("acc", "t", 0)]
    g = _with_groups(graph(ops, edges), {"i0": "i", "i1": "i"})
    breakdown = bound_breakdown(_problem(g, fully_connected(2)))
    assert breakdown["path_blocks"] == pytest.approx(13.5)
    _assert_beats_old(breakdown, "path_blocks", 13.5)
    index = {name: k for k, (name, _) in enumerate(ops)}
    assert brute_force_makespan([[t, t] for _, t in ops], [(index[a], index[b], size) for a, b, size in edges],
                                lambda s, a, b: s / 1e6, groups=[[index["i0"], index["i1"]]]) == pytest.approx(13.5)


def test_path_blocks_charge_a_switch_in_both_passes_of_a_training_graph() -> None:
    """A three-layer model's forward f0 -> f1 -> f2 and backward b2 -> b1 -> b0 as one path
    (3, 1, 0, 4, 4, 4 ms), groups {f_i, b_i}; s (3 ms) shares b0's group and runs after b2
    and before b0. Transfers f0 -> f1 and b1 -> b0 cost 1 ms, b2 -> s 2 ms, the rest
    nothing; 3 devices.

    With layers 0 and 1 on one device, b1 and s both run there between b2 and b0: 19.
    Apart, s runs beside b1, but the path changes device in both passes: 16 + 1 + 1 = 18,
    the optimum. Charging only the backward pass's change, path blocks gave 17.
    """
    ops = [("f0", 3.0), ("f1", 1.0), ("f2", 0.0), ("b2", 4.0), ("s", 3.0), ("b1", 4.0), ("b0", 4.0)]
    edges = [("f0", "f1", 1_000_000), ("f1", "f2", 0), ("f2", "b2", 0), ("b2", "b1", 0), ("b1", "b0", 1_000_000),
             ("b2", "s", 2_000_000), ("s", "b0", 0)]
    groups = {"f0": "l0", "b0": "l0", "s": "l0", "f1": "l1", "b1": "l1", "f2": "l2", "b2": "l2"}
    breakdown = bound_breakdown(_problem(_with_groups(graph(ops, edges), groups), fully_connected(3)))
    assert breakdown["path_blocks"] == pytest.approx(18.0)
    _assert_beats_old(breakdown, "path_blocks", 18.0)
    assert _optimum_of(ops, edges, groups, 3) == pytest.approx(18.0)


def test_path_blocks_charge_the_ops_inside_a_block_on_top_of_the_transfer_into_it() -> None:
    """Ops that descend from a path op of a block run after the block starts, so on top of
    the transfer the block waits for (only those descending from the op before it may run
    during that wait). A forward/backward path f0 f1 f2 s6 b1 b0 (1, 3, 3, 3, 0, 4 ms) with
    b2 (3 ms, f2's group) and s7 (2 ms, f0's group) both after f2 and before the path's
    end, 2 devices (`_switch_case(958)`): every split of the path then costs at least 19,
    the optimum; charging the larger of the transfer and those ops, path blocks gave 18."""
    ops = [("f0", 1.0), ("f1", 3.0), ("f2", 3.0), ("s7", 2.0), ("s6", 3.0), ("b2", 3.0), ("b1", 0.0), ("b0", 4.0)]
    edges = [("f0", "f1", 1_000_000), ("f1", "f2", 3_000_000), ("f2", "b2", 2_000_000), ("b2", "b1", 1_000_000),
             ("b1", "b0", 1_000_000), ("f2", "s6", 1_000_000), ("s6", "b1", 2_000_000), ("f2", "s7", 2_000_000),
             ("s7", "b0", 0)]
    groups = {"f0": "l0", "s7": "l0", "b0": "l0", "f1": "l1", "s6": "l1", "b1": "l1", "f2": "l2", "b2": "l2"}
    breakdown = bound_breakdown(_problem(_with_groups(graph(ops, edges), groups), fully_connected(2)))
    _assert_beats_old(breakdown, "path_blocks", 19.0)
    assert _optimum_of(ops, edges, groups, 2) == pytest.approx(19.0)


def test_switch_cover_pays_a_switch_or_the_ops_inside_the_path() -> None:
    """f0 -> f1 -> b1 -> b0 (2, 0, 4, 3 ms) with groups {f0, b0} and {f1, s}; s (3 ms)
    runs after f0 and before b0; every tensor costs 2 ms; 2 devices.

    On one device s runs inside the path: 9 + 3 = 12, the optimum. To run s elsewhere,
    {f1, s} sits apart from {f0, b0}, and the path, which starts and ends in {f0, b0},
    must switch away and back (b1 sits apart from one of them): 9 + 2 + 2 = 13. Path
    blocks see one split (2 ms) only: 11; the cover's triangle rule charges both."""
    ops = [("f0", 2.0), ("s", 3.0), ("f1", 0.0), ("b1", 4.0), ("b0", 3.0)]
    edges = [("f0", "f1", 2_000_000), ("f1", "b1", 2_000_000), ("b1", "b0", 2_000_000), ("f0", "s", 2_000_000),
             ("s", "b0", 2_000_000)]
    groups = {"f0": "l0", "b0": "l0", "f1": "l1", "s": "l1"}
    breakdown = bound_breakdown(_problem(_with_groups(graph(ops, edges), groups), fully_connected(2)))
    assert breakdown["path_blocks"] == pytest.approx(11.0)
    _assert_beats_old(breakdown, "switch_cover", 12.0)
    assert _optimum_of(ops, edges, groups, 2) == pytest.approx(12.0)


def test_paired_chains_are_a_two_job_shop() -> None:
    """Chains x1 -> x2 and y1 -> y2 (2 ms each), groups {x1, y1} and {x2, y2}, 1 ms
    transfers, 2 devices: the forward and backward copies of a two-layer model.

    One device: 8. Two devices: the first group's device runs both 2 ms ops (one ends at
    4), the other chain crosses (1 ms) and the second device again runs both: 2 + 1 + 2 + 2
    = 7, the optimum. The critical path is 4, the group bounds 6, the path blocks 5.
    """
    g = _with_groups(graph([("x1", 2.0), ("x2", 2.0), ("y1", 2.0), ("y2", 2.0)],
                           [("x1", "x2", 1_000_000), ("y1", "y2", 1_000_000)]),
                     {"x1": "l1", "y1": "l1", "x2": "l2", "y2": "l2"})
    _assert_beats_old(bound_breakdown(_problem(g, fully_connected(2))), "paired_chains", 7.0)
    assert brute_force_makespan([[2, 2]] * 4, [(0, 1, 1e6), (2, 3, 1e6)], lambda s, a, b: s / 1e6,
                                groups=[[0, 2], [1, 3]]) == pytest.approx(7.0)


def test_group_packing_places_indivisible_groups() -> None:
    """Three independent groups of 2 x 2 ms on 2 devices: one device gets two: 8 > 12 / 2."""
    g = _with_groups(graph([(f"o{k}", 2.0) for k in range(6)]),
                     {f"o{k}": f"g{k // 2}" for k in range(6)})
    _assert_beats_old(bound_breakdown(_problem(g, fully_connected(2))), "group_packing", 8.0)


def test_paths_split_into_blocks_respect_memory() -> None:
    """The path-blocks case 'one device' is impossible when the path's groups do not fit:
    a -> b -> c (2 ms each), 6 bytes each on 12-byte devices, 5 ms transfers: 2+2+5+2 = 11."""
    g = graph([("a", 2.0, 6), ("b", 2.0, 6), ("c", 2.0, 6)], [("a", "b", 5_000_000), ("b", "c", 5_000_000)])
    b = bound_breakdown(_problem(g, fully_connected(2, memory_bytes=12)))
    assert b["path_blocks"] == pytest.approx(11.0)


def test_a_2500_op_training_graph_is_bounded_quickly() -> None:
    """Layered training-like graph (forward layers of five ops, the backward pass in
    reverse, groups of two): every bound, without blowing up (about 0.3 s idle; the limit
    is far above it so that a loaded machine cannot fail the test, a cubic cost would)."""
    rng = random.Random(3)
    ops, edges, groups = [], [], {}
    width, depth = 5, 250
    for layer in range(depth):
        for j in range(width):
            ops.append((f"f{layer}_{j}", rng.uniform(0.1, 2.0)))
            if layer:
                for i in rng.sample(range(width), 2):
                    edges.append((f"f{layer - 1}_{i}", f"f{layer}_{j}", rng.randint(1, 8) * 1_000_000))
    for layer in reversed(range(depth)):
        for j in range(width):
            ops.append((f"b{layer}_{j}", rng.uniform(0.1, 4.0)))
            groups[f"f{layer}_{j}"] = groups[f"b{layer}_{j}"] = f"g{layer}_{j}"
            edges.append((f"f{layer}_{j}", f"b{layer}_{j}", 1_000_000))
            if layer < depth - 1:
                edges.append((f"b{layer + 1}_{j}", f"b{layer}_{j}", 2_000_000))
    problem = _problem(_with_groups(graph(ops, edges), groups), fully_connected(4, bandwidth_gb_per_s=25.0))
    assert problem.n_ops == 2500
    start = time.perf_counter()
    b = bound_breakdown(problem)
    assert time.perf_counter() - start < 20.0
    assert max(b.values()) >= b["critical_path"] > 0


def test_2500_op_forward_backward_copies_are_bounded_quickly() -> None:
    """Two 1,250-op chains with skips, op i of each in group i (the msr layer graphs' shape,
    the paired chains' worst case): every bound, without blowing up (about 0.7 s idle; the
    limit is far above it so that a loaded machine cannot fail the test, a cubic cost would)."""
    rng = random.Random(5)
    ops, edges, groups = [], [], {}
    for i in range(1250):
        ops += [(f"f{i}", rng.uniform(0.1, 5.0)), (f"b{i}", rng.uniform(0.1, 8.0))]
        groups[f"f{i}"] = groups[f"b{i}"] = f"g{i}"
        for j in {i - 1, i - rng.randint(1, 4)} - {-1, -2, -3, -4}:
            size = rng.randint(1, 50) * 1_000_000
            edges += [(f"f{j}", f"f{i}", size), (f"b{j}", f"b{i}", size)]
    problem = _problem(_with_groups(graph(ops, edges), groups), fully_connected(4, bandwidth_gb_per_s=25.0))
    start = time.perf_counter()
    b = bound_breakdown(problem)
    assert time.perf_counter() - start < 20.0
    assert max(b.values()) >= b["critical_path"] > 0
