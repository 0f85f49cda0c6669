"""Fuzz campaign: thousands of random small instances, every back end, every answer checked.

    python -m benchmarks.fuzz --cases 2000 --seed 0 --out benchmarks/reports/2026-11-23-fuzz
    python -m benchmarks.fuzz --report-only --out benchmarks/reports/2026-11-23-fuzz

Case i is drawn from random.Random(seed + i): 1-9 ops with zero, tiny (1e-4 ms), round or
ragged durations or analytic flops costs on heterogeneous devices; tight memory; colocation
groups; pins; 1-3 devices on fully connected, non-uniform, line or switched hardware (devices
joined only through a switch). Each case is solved through `placer.engine.place` by CP-SAT,
the MILP on CBC and HiGHS (shortest routing; flow routing too up to FLOW_MAX_OPS ops) and the
three heuristics, all with threads=1, in one forked child per case with a hard deadline.

The answers are judged (`judge`) against each other, against the independent verifier
(../shared/tools/verify_result.py) and, up to REFERENCE_MAX_OPS ops, against the exhaustive
reference optimum of tests/reference.py. Rows go to results.jsonl as cases finish, so a
capped or interrupted run keeps what it did; report.md lists every failure with a reproducer.
This is a campaign, not a test: tests/test_fuzz_smoke.py runs a few fixed cases of it.
"""
from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import heapq
import importlib.util
import io
import json
import math
import random
import sys
import tempfile
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "BACKENDS", "MODELS", "FuzzCase", "random_case", "backends_for", "reference_ms", "solve_case", "judge", "run_case",
    "run_campaign", "write_report", "preload", "main",
]

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / "benchmarks" / "reports" / "2026-11-23-fuzz"
STATUSES = ("optimal", "feasible", "infeasible", "no_solution")
EXACT = ("cpsat", "cbc", "highs")
# (label, solver, routing); flow routing only on the smaller cases (see backends_for)
BACKENDS: tuple[tuple[str, str, str], ...] = (
    ("cpsat", "cpsat", "shortest"),
    ("cbc/shortest", "cbc", "shortest"),
    ("highs/shortest", "highs", "shortest"),
    ("cbc/flow", "cbc", "flow"),
    ("highs/flow", "highs", "flow"),
    ("heft", "heft", "shortest"),
    ("critical_path", "critical_path", "shortest"),
    ("single_device", "single_device", "shortest"),
)
# The exact models solved on their own, without the engine's heuristic incumbent: on small
# graphs a heuristic often meets the lower bound and `place` never runs the model, which
# hid a decoding bug. Their optimum must equal the reference and decode to a schedule
# no longer than the solver's objective.
MODELS: tuple[tuple[str, str, str], ...] = (
    ("cpsat/model", "cpsat", "shortest"),
    ("cbc/model", "cbc", "shortest"),
    ("highs/model", "highs", "shortest"),
    ("highs/flow-model", "highs", "flow"),
)
FLOW_MAX_OPS = 6
REFERENCE_MAX_OPS = 6
REL_TOL = 1e-6  # agreement between back ends that say optimal, and with the reference
MODEL_TOL = 1e-5  # a MILP's own objective: big-M rows hold to the solver's 1e-6 feasibility tolerance
MIP_TOL = 1e-6    # ... and its binaries to 1e-6 integrality: each big-M row may give up 2 x 1e-6 x M, and
                  # the rows of a chain add up (seed 27184, HiGHS flow model, M 28.9 ms: objective 8.5e-5
                  # below the optimum, the decoded answer exact)
EARLY = 0.5  # an exact solver that stops unproven before this share of its limit has failed
OVERRUN_S = 2.0  # ... and so has one that runs this much past its limit
GRACE_S = 20.0  # per exact back end, on top of its time limit, before the case is killed


# --------------------------------------------------------------------------- instances


@dataclass(frozen=True)
class FuzzCase:
    """One random instance: documents plus the features it was drawn with."""

    index: int
    seed: int
    graph: dict[str, Any]
    hardware: dict[str, Any]
    features: dict[str, Any]

    @property
    def n_ops(self) -> int:
        return len(self.graph["ops"])


def _durations(rng: random.Random, n: int, style: str) -> list[float]:
    """Profiled op times in ms; the styles stress ticks, zero-length ops and tolerances."""
    draw: dict[str, Callable[[], float]] = {
        "round": lambda: float(rng.randint(0, 6)),
        "ragged": lambda: round(rng.uniform(0.0, 5.0), 3),
        "zeros": lambda: 0.0 if rng.random() < 0.5 else round(rng.uniform(0.0, 1.0), 3),
        "tiny": lambda: rng.choice([0.0, 1e-4, 2e-4, 3e-4, 1e-3]),
        "mixed": lambda: rng.choice([0.0, 1e-4, 0.061, 0.244, 1.0, 2.5, round(rng.uniform(0, 3), 6)]),
    }
    return [draw[style]() for _ in range(n)]


def _edges(rng: random.Random, n: int) -> list[dict[str, Any]]:
    """Forward edges (lower to higher index) with byte counts from empty to large."""
    density = rng.choice([0.0, 0.15, 0.3, 0.5, 0.8])
    sizes = [0, 1, 765, 1_000, 100_000, 1_000_000, 2_500_000, 7_000_000]
    return [{"src": f"op{u}", "dst": f"op{v}", "bytes": rng.choice(sizes)}
            for u in range(n) for v in range(u + 1, n) if rng.random() < density]


def _ops(rng: random.Random, n: int, analytic: bool, style: str) -> list[dict[str, Any]]:
    if not analytic:
        return [{"id": f"op{k}", "time_ms": t} for k, t in enumerate(_durations(rng, n, style))]
    ops = []
    for k in range(n):
        op: dict[str, Any] = {"id": f"op{k}", "flops": rng.choice([1e6, 1e8, 7.7e8, 1e9, 3e9, 1e10])}
        if rng.random() < 0.3:
            op["bytes_accessed"] = rng.choice([1e5, 1e7, 3e8])
        if rng.random() < 0.15:  # a profiled op among analytic ones
            op = {"id": f"op{k}", "time_ms": rng.choice([0.0, 0.5, 1.25])}
        ops.append(op)
    return ops


def _add_memory(rng: random.Random, ops: list[dict[str, Any]], devices: list[dict[str, Any]]) -> str:
    """Op memory and tight device capacities (sometimes too tight: infeasible cases)."""
    scale = rng.choice([1, 1_000_003, 2**30])
    for op in ops:
        op["memory_bytes"] = rng.randint(0, 5) * scale
    total = sum(op["memory_bytes"] for op in ops)
    factor = rng.choice([0.8, 1.0, 1.0, 1.2, 1.5, 2.0])
    for d in devices:
        if rng.random() < 0.85:
            d["memory_bytes"] = max(0, math.ceil(total * factor / len(devices)) + rng.choice([-scale, 0, 0, scale]))
    return f"memory x{factor}"


def _add_groups(rng: random.Random, ops: list[dict[str, Any]]) -> int:
    """One or two colocation groups of 2-3 ops."""
    ids = list(range(len(ops)))
    rng.shuffle(ids)
    made = 0
    for g in range(rng.randint(1, 2)):
        members, ids = ids[: rng.randint(2, 3)], ids[3:]
        if len(members) < 2:
            break
        for k in members:
            ops[k]["group"] = f"g{g}"
        made += 1
    return made


def _add_pins(rng: random.Random, ops: list[dict[str, Any]], devices: list[dict[str, Any]]) -> int:
    """Pin one or two ops; a group's pins all name its first pin's device."""
    group_pin: dict[str, str] = {}
    pinned = 0
    for k in rng.sample(range(len(ops)), min(len(ops), rng.randint(1, 2))):
        device = rng.choice(devices)["id"]
        group = ops[k].get("group")
        if group is not None:
            device = group_pin.setdefault(group, device)
        ops[k]["device"] = device
        pinned += 1
    return pinned


def _link(rng: random.Random, a: str, b: str, uniform: bool) -> dict[str, Any]:
    if uniform:
        return {"a": a, "b": b, "bandwidth_gb_per_s": 1.0, "latency_us": 10.0}
    return {"a": a, "b": b, "bandwidth_gb_per_s": rng.choice([0.5, 1.0, 2.0, 10.0, 25.0, 300.0]),
            "latency_us": rng.choice([0.0, 0.0, 1.0, 5.0, 10.0, 2.5])}


def _hardware(rng: random.Random, n: int, analytic: bool) -> tuple[dict[str, Any], str]:
    """Devices and links; `kind` says how they are joined."""
    devices: list[dict[str, Any]] = [{"id": f"gpu{i}"} for i in range(n)]
    if analytic:
        for d in devices:
            d["peak_tflops"] = rng.choice([1.0, 2.0, 4.0, 10.0, 15.7])
            d["memory_bandwidth_gb_per_s"] = rng.choice([100.0, 900.0])
            if rng.random() < 0.3:
                d["efficiency"] = rng.choice([0.5, 0.75])
    ids = [d["id"] for d in devices]
    kind = rng.choice(["uniform", "nonuniform", "line", "switch", "two_switches", "mixed"] if n > 1 else
                      ["none", "switch"])
    switches: list[dict[str, Any]] = []
    pairs = [(ids[i], ids[j]) for i in range(n) for j in range(i + 1, n)]
    if kind in ("uniform", "nonuniform"):
        links = [_link(rng, a, b, kind == "uniform") for a, b in pairs]
        if kind == "nonuniform" and n == 3 and rng.random() < 0.3:
            links.pop(rng.randrange(3))  # a missing link: the route forwards through a device
    elif kind == "line":
        links = [_link(rng, a, b, False) for a, b in zip(ids, ids[1:])]
    elif kind in ("switch", "mixed"):
        switches = [{"id": "sw0"}]
        links = [_link(rng, d, "sw0", False) for d in ids]
        if kind == "mixed":
            links.append(_link(rng, *rng.choice(pairs), False))
    elif kind == "two_switches":
        switches = [{"id": "sw0"}, {"id": "sw1"}]
        links = [_link(rng, d, f"sw{i % 2}", False) for i, d in enumerate(ids)]
        links.append(_link(rng, "sw0", "sw1", False))
    else:
        links = []
    doc = {"format": "placer.hardware/v1", "name": f"fuzz-{kind}-{n}", "devices": devices,
           "switches": switches, "links": links}
    return doc, kind


def random_case(index: int, seed: int) -> FuzzCase:
    """Case `index` of the campaign with base `seed`: drawn from random.Random(seed + index)."""
    rng = random.Random(seed + index)
    n_ops = rng.choice([1, 2, 3, 4, 4, 5, 5, 6, 6, 6, 7, 8, 9])
    n_devices = rng.choice([1, 2, 2, 2, 3, 3])
    analytic = rng.random() < 0.25
    style = "analytic" if analytic else rng.choice(["round", "ragged", "zeros", "tiny", "mixed"])
    hardware, kind = _hardware(rng, n_devices, analytic)
    ops = _ops(rng, n_ops, analytic, style)
    features: dict[str, Any] = {"ops": n_ops, "devices": n_devices, "hardware": kind, "costs": style}
    if rng.random() < 0.4:
        features["memory"] = _add_memory(rng, ops, hardware["devices"])
    if n_ops >= 2 and rng.random() < 0.3:
        features["groups"] = _add_groups(rng, ops)
    if rng.random() < 0.25:
        features["pins"] = _add_pins(rng, ops, hardware["devices"])
    graph = {"format": "placer.graph/v1", "name": f"fuzz-{seed + index}", "ops": ops, "edges": _edges(rng, n_ops)}
    return FuzzCase(index=index, seed=seed + index, graph=graph, hardware=hardware, features=features)


def backends_for(case: FuzzCase) -> list[tuple[str, str, str]]:
    """Every back end and model run, flow routing only up to FLOW_MAX_OPS ops (its model
    grows per link)."""
    return [b for b in BACKENDS + MODELS if b[2] != "flow" or case.n_ops <= FLOW_MAX_OPS]


# --------------------------------------------------------------------------- the reference


def _min_delay_ms(hardware: dict[str, Any], size_bytes: float, a: str, b: str) -> float:
    """Dijkstra over links (store-and-forward: each hop costs bytes / B + L), written here
    from the format, not from placer.routing."""
    graph: dict[str, list[tuple[str, float]]] = {}
    for link in hardware["links"]:
        cost = size_bytes / (link["bandwidth_gb_per_s"] * 1e9) * 1e3 + link.get("latency_us", 0.0) * 1e-3
        graph.setdefault(link["a"], []).append((link["b"], cost))
        graph.setdefault(link["b"], []).append((link["a"], cost))
    best = {a: 0.0}
    heap = [(0.0, a)]
    while heap:
        t, u = heapq.heappop(heap)
        if u == b:
            return t
        if t > best.get(u, math.inf):
            continue
        for v, cost in graph.get(u, []):
            if t + cost < best.get(v, math.inf):
                best[v] = t + cost
                heapq.heappush(heap, (t + cost, v))
    return math.inf


def _op_time_ms(op: dict[str, Any], device: dict[str, Any]) -> float:
    """Roofline time from the format's definition (independent of placer.cost)."""
    if "time_ms" in op:
        return float(op["time_ms"])
    eff = device.get("efficiency", 1.0)
    compute = op["flops"] / (device["peak_tflops"] * 1e12 * eff)
    memory = op.get("bytes_accessed", 0.0) / (device["memory_bandwidth_gb_per_s"] * 1e9 * eff)
    return max(compute, memory) * 1e3


def reference_ms(case: FuzzCase) -> float | None:
    """The exhaustive optimum (tests/reference.py); None when nothing fits memory.

    Pins become infinite times on the other devices. Ops are listed topologically.
    """
    from tests.reference import brute_force_makespan

    ops, devices = case.graph["ops"], case.hardware["devices"]
    index = {op["id"]: k for k, op in enumerate(ops)}
    times = [[_op_time_ms(op, d) if op.get("device", d["id"]) == d["id"] else math.inf for d in devices]
             for op in ops]
    edges = [(index[e["src"]], index[e["dst"]], e["bytes"]) for e in case.graph["edges"]]
    names = [d["id"] for d in devices]

    def delay(size: float, a: int, b: int) -> float:
        return _min_delay_ms(case.hardware, size, names[a], names[b])

    groups: dict[str, list[int]] = {}
    for k, op in enumerate(ops):
        if "group" in op:
            groups.setdefault(op["group"], []).append(k)
    best = brute_force_makespan(times, edges, delay, memory=[op.get("memory_bytes", 0) for op in ops],
                                capacity=[d.get("memory_bytes") for d in devices], groups=list(groups.values()))
    return None if best is None or math.isinf(best) else best


# --------------------------------------------------------------------------- solving (in a child)


def _verifier() -> Callable[[list[str]], int]:
    """main() of the team's independent checker: ../shared/tools, else the bundled copy."""
    shared = ROOT.parent / "shared" / "tools" / "verify_result.py"
    path = shared if shared.exists() else ROOT / "tests" / "tools" / "verify_result.py"
    spec = importlib.util.spec_from_file_location("verify_result", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def _verify(verify: Callable[[list[str]], int], tmp: Path, case: FuzzCase, result: dict[str, Any]) -> str | None:
    """None when the verifier accepts the result, else what it printed."""
    paths = []
    for name, doc in (("graph", case.graph), ("hardware", case.hardware), ("result", result)):
        paths.append(tmp / f"{name}.json")
        paths[-1].write_text(json.dumps(doc))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = verify([str(p) for p in paths])
    return None if code == 0 else out.getvalue().strip() or f"exit {code}"


def _answer(case: FuzzCase, label: str, solver: str, routing: str, time_limit_s: float,
            verify: Callable[[list[str]], int], tmp: Path) -> dict[str, Any]:
    """Solve with one back end: what it said, and what the validator and verifier say of it."""
    from placer.engine import PlaceOptions, place
    from placer.schema import parse_graph, parse_hardware
    from placer.validate import check_result

    options = {"solver": solver, "routing": routing, "time_limit_s": time_limit_s, "threads": 1, "seed": 0,
               "relative_gap": 0.0}
    row: dict[str, Any] = {"backend": label, "options": options}
    try:
        graph, hardware = parse_graph(case.graph), parse_hardware(case.hardware)
        result = place(graph, hardware, PlaceOptions(**options))
        doc = result.model_dump(mode="json")
        stats = doc.get("stats") or {}
        row.update(
            status=result.status, reason=result.reason, makespan_ms=result.makespan_ms,
            lower_bound_ms=result.lower_bound_ms, solve_time_s=result.solve_time_s,
            heft_ms=(doc.get("baselines") or {}).get("heft_ms"),
            solver_status=stats.get("solver_status"), solver_wall_s=stats.get("solver_wall_s"),
            proof=stats.get("proof"),
            exact_ticks=stats.get("exact_ticks"), rounding_slack_ms=stats.get("rounding_slack_ms"),
            violations=check_result(graph, hardware, result),
            verifier=_verify(verify, tmp, case, doc),
        )
    except Exception:  # noqa: BLE001 - an exception is a finding, recorded with its traceback
        row["error"] = traceback.format_exc(limit=12)
    return row


def _solve_model(problem: Any, solver: str, routing: str, time_limit_s: float) -> dict[str, Any]:
    """Build and solve one exact model with no incumbent; decode and re-time its answer."""
    from placer.bounds import lower_bound_ms
    from placer.schedule import retime

    bound = lower_bound_ms(problem)
    if solver == "cpsat":
        from placer.formulations.cpsat_model import build_cpsat
        from solvers.cpsat import solve_cpsat

        f = build_cpsat(problem, None, bound)
        run, cp = solve_cpsat(f.model, time_limit_s, threads=1)
        tick, slack, big_m_ms = f.tick_ms, f.rounding_slack_ms, 0.0
        decode: Callable[[], Any] = lambda: f.decode(cp.value, problem)  # noqa: E731
    else:
        from placer.formulations.milp import build_milp
        from solvers.pulp_milp import solve_milp

        m = build_milp(problem, routing, None, bound)
        run = solve_milp(m.prob, solver, time_limit_s, threads=1)
        tick, slack, big_m_ms = 1.0, 0.0, m.big_m_ms
        decode = lambda: m.decode(problem)  # noqa: E731
    row: dict[str, Any] = {"status": run.status.value, "rounding_slack_ms": slack, "exact_ticks": slack == 0.0,
                           "wall_s": run.wall_s, "killed": run.killed,
                           "integrality_slack_ms": 2 * MIP_TOL * big_m_ms * problem.n_ops}
    if run.has_solution:
        row.update(objective_ms=run.objective * tick, makespan_ms=retime(problem, decode()).makespan_ms)
    return row


def _model_answer(case: FuzzCase, label: str, solver: str, routing: str, time_limit_s: float) -> dict[str, Any]:
    """One exact model on its own (MODELS): its status, objective and decoded makespan."""
    from placer.feasibility import explain_infeasible
    from placer.model import build_problem
    from placer.schema import parse_graph, parse_hardware

    row: dict[str, Any] = {"backend": label, "options": {"solver": solver, "routing": routing,
                                                         "time_limit_s": time_limit_s, "model_only": True}}
    try:
        problem = build_problem(parse_graph(case.graph), parse_hardware(case.hardware))
        if explain_infeasible(problem) is not None:
            return {**row, "status": "skipped"}
        row.update(_solve_model(problem, solver, routing, time_limit_s))
    except Exception:  # noqa: BLE001 - an exception is a finding
        row["error"] = traceback.format_exc(limit=12)
    return row


def solve_case(case: FuzzCase, time_limit_s: float, emit: Callable[[dict[str, Any]], None]) -> None:
    """Every back end on one case; one message per answer (runs in the forked child)."""
    verify = _verifier()
    with tempfile.TemporaryDirectory(prefix="placer-fuzz-") as tmp:
        for label, solver, routing in backends_for(case):
            if label.endswith("model"):
                emit(_model_answer(case, label, solver, routing, time_limit_s))
            else:
                emit(_answer(case, label, solver, routing, time_limit_s, verify, Path(tmp)))


# --------------------------------------------------------------------------- judging


def _tol(x: float) -> float:
    return REL_TOL * max(1.0, abs(x))


def _slack(a: dict[str, Any]) -> float:
    """How far CP-SAT's optimum may sit above the true one when its ticks are not exact."""
    return (a.get("rounding_slack_ms") or 0.0) if a.get("exact_ticks") is False else 0.0


def _gave_up(name: str, status: str, wall_s: float | None, limit_s: float) -> list[str]:
    """A solver that stops without a proof well before its limit has failed, and so has one
    that runs well past it (CBC hung: killed at its hard deadline). Ending at the limit is
    no finding: the report counts those."""
    if wall_s is not None and wall_s < EARLY * limit_s:
        return [f"{name}: {status} after {wall_s:.2f} s of its {limit_s:g} s (the solver gave up)"]
    if wall_s is not None and wall_s > limit_s + OVERRUN_S:
        return [f"{name}: {status} after {wall_s:.2f} s, past its {limit_s:g} s limit (overran)"]
    return []


def _judge_answer(a: dict[str, Any]) -> list[str]:
    """Checks one answer on its own."""
    name = a["backend"]
    if "error" in a:
        return [f"{name}: exception: {a['error'].strip().splitlines()[-1]}"]
    status, span, bound = a.get("status"), a.get("makespan_ms"), a.get("lower_bound_ms")
    if status not in STATUSES:
        return [f"{name}: unknown status {status!r}"]
    gave_up = []
    if a["options"]["solver"] in EXACT and a.get("solver_status") in ("no_solution", "feasible"):
        gave_up = _gave_up(name, f"solver {a['solver_status']}", a.get("solver_wall_s"), a["options"]["time_limit_s"])
    if status in ("infeasible", "no_solution"):
        return gave_up + ([f"{name}: {status} with a makespan"] if span is not None else [])
    out = gave_up
    if span is None:
        out.append(f"{name}: {status} without a makespan")
        return out
    if a.get("violations"):
        out.append(f"{name}: check_result: {'; '.join(a['violations'][:3])}")
    if a.get("verifier"):
        out.append(f"{name}: verify_result: {a['verifier'][:300]}")
    if bound is not None and bound > span + _tol(span) * 1e-3:
        out.append(f"{name}: lower bound {bound} > makespan {span}")
    if status == "optimal" and bound is not None and span - bound > _tol(span):
        out.append(f"{name}: optimal with a gap (bound {bound}, makespan {span})")
    heft = a.get("heft_ms")
    if status == "optimal" and heft is not None and span > heft + _tol(heft) * 1e-3:
        out.append(f"{name}: optimal {span} is worse than HEFT {heft}")
    return out


def _judge_together(answers: list[dict[str, Any]], reference: float | None, has_reference: bool) -> list[str]:
    """Checks across answers: optima agree, no answer beats an optimum or undercuts a bound,
    infeasibility is unanimous, and the reference optimum holds."""
    ok = [a for a in answers if "error" not in a and a.get("status") in STATUSES]
    solved = [a for a in ok if a["status"] in ("optimal", "feasible") and a.get("makespan_ms") is not None]
    optimal = [a for a in solved if a["status"] == "optimal"]
    out = []
    for a in optimal:
        for b in solved:
            if b["makespan_ms"] < a["makespan_ms"] - _tol(a["makespan_ms"]) - _slack(a):
                out.append(f"{b['backend']} ({b['status']} {b['makespan_ms']}) beats {a['backend']}'s "
                           f"optimum {a['makespan_ms']}")
    for a in ok:
        bound = a.get("lower_bound_ms")
        for b in solved:
            if bound is not None and bound > b["makespan_ms"] + _tol(b["makespan_ms"]):
                out.append(f"{a['backend']}'s lower bound {bound} exceeds {b['backend']}'s makespan {b['makespan_ms']}")
    infeasible = [a["backend"] for a in ok if a["status"] == "infeasible"]
    if infeasible and solved:
        out.append(f"{', '.join(infeasible)} say infeasible, {solved[0]['backend']} found {solved[0]['makespan_ms']}")
    if not has_reference:
        return out
    if reference is None:
        out += [f"{a['backend']} found {a['makespan_ms']} where nothing fits memory" for a in solved]
        out += [f"{a['backend']}: {a['status']} on an infeasible instance" for a in ok
                if a["status"] == "no_solution" and a["options"]["solver"] in EXACT]
        return out
    for a in solved:
        if a["makespan_ms"] < reference - _tol(reference):
            out.append(f"{a['backend']}: {a['makespan_ms']} beats the reference optimum {reference}")
        if a["status"] == "optimal" and a["makespan_ms"] > reference + _tol(reference) + _slack(a):
            out.append(f"{a['backend']}: optimal {a['makespan_ms']}, the reference optimum is {reference}")
    for a in ok:
        if a.get("lower_bound_ms") is not None and a["lower_bound_ms"] > reference + _tol(reference):
            out.append(f"{a['backend']}: lower bound {a['lower_bound_ms']} above the reference optimum {reference}")
        if a["status"] == "infeasible":
            out.append(f"{a['backend']}: infeasible, the reference optimum is {reference}")
    return out


def _judge_model(m: dict[str, Any], answers: list[dict[str, Any]], reference: float | None,
                 has_reference: bool) -> list[str]:
    """A model run (MODELS) against its own objective, the reference and the engine's optima."""
    name = m["backend"]
    if "error" in m:
        return [f"{name}: exception: {m['error'].strip().splitlines()[-1]}"]
    status, slack = m.get("status"), m.get("rounding_slack_ms") or 0.0
    if status in ("no_solution", "feasible"):
        return _gave_up(name, status, m.get("wall_s"), m["options"]["time_limit_s"])
    if status == "skipped":
        return []
    if status == "infeasible":
        found = [a["backend"] for a in answers if a.get("status") in ("optimal", "feasible") and "options" in a
                 and not a["options"].get("model_only")]
        if found or (has_reference and reference is not None):
            return [f"{name}: infeasible, but {', '.join(found) or 'the reference'} found a placement"]
        return []
    objective, span = m["objective_ms"], m["makespan_ms"]
    tol = MODEL_TOL * max(1.0, abs(objective)) + m.get("integrality_slack_ms", 0.0)
    out = []
    if span > objective + tol:
        out.append(f"{name}: decodes to {span}, longer than its objective {objective}")
    if has_reference and reference is not None:
        if objective > reference + tol + slack or objective < reference - tol:
            out.append(f"{name}: optimal objective {objective}, the reference optimum is {reference}")
        if span < reference - _tol(reference):
            out.append(f"{name}: decodes to {span}, below the reference optimum {reference}")
    for a in answers:
        if a.get("status") == "optimal" and not a["options"].get("model_only"):
            if abs(objective - a["makespan_ms"]) > tol + slack + _slack(a):
                out.append(f"{name}: optimal objective {objective}, {a['backend']} says optimal {a['makespan_ms']}")
    return out


def judge(answers: list[dict[str, Any]], reference: float | None, has_reference: bool) -> list[str]:
    """Every failed check of one case, as sentences (empty when all hold).

    Unique sentences only: one wrong optimum would otherwise be reported once per peer.
    """
    placed = [a for a in answers if not a.get("options", {}).get("model_only")]
    models = [a for a in answers if a.get("options", {}).get("model_only")]
    found = [f for a in placed for f in _judge_answer(a)] + _judge_together(placed, reference, has_reference)
    found += [f for m in models for f in _judge_model(m, placed, reference, has_reference)]
    return list(dict.fromkeys(found))


# --------------------------------------------------------------------------- the campaign


def preload() -> None:
    """Import the engine and solver libraries before forking: children start at once."""
    import pulp  # noqa: F401
    from ortools.sat.python import cp_model  # noqa: F401

    import placer.engine
    import placer.formulations.cpsat_model
    import placer.formulations.milp
    import placer.validate
    import solvers.cpsat
    import solvers.pulp_milp  # noqa: F401


def run_case(case: FuzzCase, time_limit_s: float) -> dict[str, Any]:
    """One case in a forked child with a hard deadline, judged: its results.jsonl row."""
    from benchmarks.solvers import run_isolated

    began = time.perf_counter()
    has_reference = case.n_ops <= REFERENCE_MAX_OPS
    reference = reference_ms(case) if has_reference else None
    n_exact = sum(1 for b in backends_for(case) if b[1] in EXACT)
    outcome = run_isolated(solve_case, (case, time_limit_s), n_exact * (time_limit_s + GRACE_S) + 10.0)
    answers = [m for m in outcome.messages if "backend" in m]
    failures = judge(answers, reference, has_reference)
    if outcome.killed:
        done = {a["backend"] for a in answers}
        stuck = next((b[0] for b in backends_for(case) if b[0] not in done), "?")
        failures.append(f"{stuck}: killed at the case's hard deadline")
    elif outcome.exit_code != 0 or len(answers) < len(backends_for(case)):
        failures.append(f"the child exited with {outcome.exit_code} after {len(answers)} answers")
    row: dict[str, Any] = {
        "case": case.index, "seed": case.seed, "features": case.features,
        "reference_ms": reference if has_reference else "not computed",
        "answers": {a["backend"]: _compact(a) for a in answers},
        "heuristic_proofs": sum(1 for a in answers if a.get("status") == "optimal" and a.get("proof")
                                and a["options"]["solver"] in EXACT),
        "failures": failures, "wall_s": round(time.perf_counter() - began, 3),
    }
    if failures:
        named = [a for a in answers if any(a["backend"] in f for f in failures)]
        row["details"] = [{k: v for k, v in a.items() if k != "options"} for a in answers]
        row["reproducer"] = {
            "graph": case.graph, "hardware": case.hardware,
            "options": {a["backend"]: a["options"] for a in named or answers},
        }
    return row


def _compact(answer: dict[str, Any]) -> list[Any]:
    """[status, makespan_ms, lower bound (or a model's objective) in ms]: the row of a
    passing answer (failing cases also keep every answer whole, under `details`)."""
    def ms(x: float | None) -> float | None:
        return float(f"{x:.10g}") if x is not None else None

    status = "error" if "error" in answer else answer.get("status")
    return [status, ms(answer.get("makespan_ms")), ms(answer.get("lower_bound_ms", answer.get("objective_ms")))]


def run_campaign(n_cases: int, seed: int, out: Path, time_limit_s: float, max_wall_s: float | None = None,
                 start: int = 0, log: Callable[[str], None] = print) -> int:
    """Run cases start..n_cases-1, appending each judged row to out/results.jsonl.

    Stops early (between cases) once `max_wall_s` has passed. Returns the cases run.
    """
    preload()
    out.mkdir(parents=True, exist_ok=True)
    began = time.perf_counter()
    ran = 0
    with open(out / "results.jsonl", "a") as sink:
        for i in range(start, n_cases):
            if max_wall_s is not None and time.perf_counter() - began > max_wall_s:
                log(f"wall-clock cap of {max_wall_s:g} s reached after {ran} cases")
                break
            row = run_case(random_case(i, seed), time_limit_s)
            sink.write(json.dumps(row) + "\n")
            sink.flush()
            ran += 1
            if row["failures"]:
                log(f"case {i} (seed {row['seed']}): " + " | ".join(row["failures"][:3]))
            if ran % 50 == 0:
                log(f"{ran} cases, {time.perf_counter() - began:.0f} s")
    return ran


# --------------------------------------------------------------------------- the report


_KINDS = (  # (phrase in the failure sentence, its kind), first match wins
    ("exception", "exception"), ("killed", "killed at the hard deadline"), ("child exited", "child crashed"),
    ("check_result", "check_result rejects"), ("verify_result", "verifier rejects"),
    ("decodes to", "decoding"), ("reference", "disagrees with the reference"), ("beats", "beats an optimum"),
    ("says optimal", "optima disagree"),
    ("worse than HEFT", "optimal worse than HEFT"), ("with a gap", "optimal with a gap"),
    ("gave up", "solver gave up early"), ("overran", "solver overran its limit (hung)"), ("lower bound", "invalid lower bound"),
    ("infeasible", "infeasibility disputed"),
)


def _kind(failure: str) -> str:
    return next((kind for phrase, kind in _KINDS if phrase in failure), "other")


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    with open(path) as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    return lines + ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]


def _status_table(rows: list[dict[str, Any]]) -> list[str]:
    counts: dict[str, Counter[str]] = {label: Counter() for label, _, _ in BACKENDS + MODELS}
    for row in rows:
        for label, (status, _, _) in row["answers"].items():
            counts[label][status] += 1
    columns = [*STATUSES, "skipped", "error"]
    table = [[label, sum(c.values()), *(c[s] for s in columns)] for label, c in counts.items()]
    return _table(["back end", "answers", *columns], table)


def _feature_table(rows: list[dict[str, Any]]) -> list[str]:
    counts: Counter[str] = Counter()
    for row in rows:
        f = row["features"]
        counts[f"{f['ops']} ops"] += 1
        counts[f"{f['devices']} devices"] += 1
        counts[f"hardware {f['hardware']}"] += 1
        counts[f"costs {f['costs']}"] += 1
        for key in ("memory", "groups", "pins"):
            if key in f:
                counts[f"with {key}"] += 1
    return _table(["feature", "cases"], sorted(counts.items()))


def write_report(out: Path, meta: dict[str, Any], max_listed: int = 40) -> str:
    """report.md from out/results.jsonl; returns its text."""
    rows = list(_rows(out / "results.jsonl"))
    failing = [r for r in rows if r["failures"]]
    with_reference = sum(1 for r in rows if r["reference_ms"] != "not computed")
    optimal = sum(1 for r in rows for label, a in r["answers"].items() if a[0] == "optimal"
                  and label.split("/")[0] in EXACT and not label.endswith("model"))
    by_heuristic = sum(r["heuristic_proofs"] for r in rows)
    kinds = Counter(_kind(f) for r in failing for f in r["failures"])
    lines = [
        "# Fuzz campaign", "",
        f"`{meta.get('command', 'python -m benchmarks.fuzz')}` at commit `{meta.get('commit')}`, "
        f"{meta.get('date')}; {meta.get('wall_s', 0):.0f} s wall clock on {meta.get('machine')}.", "",
        f"- **{len(rows)} cases** (seeds {meta.get('seed')} + 0..{len(rows) - 1}), "
        f"{sum(len(r['answers']) for r in rows)} answers; "
        f"{with_reference} cases with <= {REFERENCE_MAX_OPS} ops checked against the exhaustive reference.",
        f"- exact back ends' time limit {meta.get('time_limit_s')} s, threads=1, relative_gap=0.",
        f"- **{len(failing)} cases with failures**" + (":" if failing else "."), "",
    ]
    if kinds:
        lines += _table(["failed check", "sentences"], sorted(kinds.items())) + [""]
    lines += ["## Statuses per back end", ""] + _status_table(rows) + [""]
    lines += [f"Of the {optimal} `optimal` answers of exact back ends through `place`, {by_heuristic} came "
              "without running the model (a heuristic met the lower bound): the `*/model` rows solve every "
              "model alone.", "",
              "`results.jsonl`: one row per case; `answers` maps each back end to [status, makespan_ms, "
              "lower_bound_ms] (a model's objective for `*/model`); failing cases add `details` (every "
              "answer whole) and `reproducer`.", ""]
    lines += ["## Cases by feature", ""] + _feature_table(rows) + [""]
    lines += ["## Failures", ""]
    if not failing:
        lines += ["None.", ""]
    for r in failing[:max_listed]:
        lines += [f"### case {r['case']} (seed {r['seed']})", ""] + [f"- {f}" for f in r["failures"]]
        lines += ["", "```json", json.dumps(r.get("reproducer", {}), sort_keys=True), "```", ""]
    if len(failing) > max_listed:
        lines += [f"... {len(failing) - max_listed} more in results.jsonl (`failures`, `reproducer`).", ""]
    text = "\n".join(lines)
    (out / "report.md").write_text(text)
    return text


def _meta(args: argparse.Namespace, wall_s: float) -> dict[str, Any]:
    import platform
    import subprocess

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return {
        "command": "python -m benchmarks.fuzz " + " ".join(sys.argv[1:]),
        "commit": commit.stdout.strip() or None, "date": dt.date.today().isoformat(),
        "machine": f"{platform.machine()}, {__import__('os').cpu_count()} cores, Python {platform.python_version()}",
        "seed": args.seed, "cases": args.cases, "time_limit_s": args.time_limit, "wall_s": wall_s,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=200, help="number of cases (default 200)")
    parser.add_argument("--seed", type=int, default=0, help="case i uses random.Random(seed + i)")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"report directory (default {DEFAULT_OUT})")
    parser.add_argument("--time-limit", type=float, default=5.0, help="per exact solve, seconds (default 5)")
    parser.add_argument("--max-wall", type=float, default=None, help="stop starting cases after this many s")
    parser.add_argument("--start", type=int, default=0, help="first case index (resume an interrupted run)")
    parser.add_argument("--report-only", action="store_true", help="re-render report.md from results.jsonl")
    args = parser.parse_args(argv)
    meta_path = args.out / "meta.json"
    if args.report_only:
        print(write_report(args.out, json.loads(meta_path.read_text()) if meta_path.exists() else {}))
        return 0
    if args.start == 0 and (args.out / "results.jsonl").exists():
        (args.out / "results.jsonl").unlink()
    began = time.perf_counter()
    run_campaign(args.cases, args.seed, args.out, args.time_limit, args.max_wall, args.start)
    meta = _meta(args, time.perf_counter() - began)
    meta_path.write_text(json.dumps(meta, indent=2) + "\n")
    text = write_report(args.out, meta)
    print(text.split("## Statuses")[0])
    return 1 if "cases with failures**:" in text else 0


if __name__ == "__main__":
    sys.exit(main())
