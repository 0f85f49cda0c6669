"""The solver benchmark on a small subset: correctness only, never timing.

Every back end runs through the benchmark's own path (forked child, hard deadline, progress
events, report); the assertions are the ones every benchmark row must satisfy.
"""
from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from benchmarks import graphs
from benchmarks.report import evaluate_targets, ratio_summary, write_report
from benchmarks.solvers import (
    BACKENDS,
    Backend,
    Case,
    build_cases,
    disjunction_count,
    machine_info,
    run_benchmark,
    run_isolated,
    skip_reason,
)

STATUSES = {"optimal", "feasible", "infeasible", "no_solution"}
EXACT = {"cpsat", "cbc", "highs"}


def _smoke_cases() -> list[Case]:
    import hardware_graphs
    from placer.zoo import build

    return [
        Case("layered", graphs.layered(12), graphs.fully_connected_hardware(2), ("layered100_2gpu",)),
        Case("random", graphs.random_dag(8, ccr=10.0), graphs.fully_connected_hardware(3)),
        Case("fork_join", graphs.fork_join(7), graphs.fully_connected_hardware(2)),
        Case("zoo", build("alexnet"), hardware_graphs.load_preset_document("dgx1_v100_quad"), ("inception_4gpu",),
             ("cpsat", "heft")),
    ]


@pytest.fixture(scope="module")
def smoke_rows() -> list[dict]:
    return run_benchmark(_smoke_cases(), BACKENDS, time_limit_s=3.0, milp_max_ops={"shortest": 12, "flow": 7},
                         grace_s=20.0)


def test_every_run_ends_in_one_of_the_four_statuses(smoke_rows):
    ran = [r for r in smoke_rows if r["status"] != "skipped"]
    assert len(ran) >= 20
    for r in ran:
        assert r["status"] in STATUSES, (r["graph"], r["backend"], r["status"], r.get("reason"))
        assert not r["leftovers_killed"], (r["graph"], r["backend"])


def test_answers_are_valid_and_honest(smoke_rows):
    for r in smoke_rows:
        if r["status"] not in ("optimal", "feasible"):
            continue
        where = (r["graph"], r["backend"])
        assert r["violations"] == [], where
        assert r["makespan_ms"] >= r["lower_bound_ms"] * (1 - 1e-9), where
        assert r["gap"] == pytest.approx((r["makespan_ms"] - r["lower_bound_ms"]) / r["makespan_ms"], abs=1e-9), where
        assert r["time_to_first_s"] <= r["time_to_best_s"] <= r["solve_time_s"] + 1e-9, where
        if r["solver"] in EXACT:
            assert r["makespan_ms"] <= r["heft_ms"] * (1 + 1e-9), where


def test_heuristic_rows_report_their_own_makespan(smoke_rows):
    for r in smoke_rows:
        if r["backend"] in ("heft", "single_device") and r["status"] in ("optimal", "feasible"):
            key = "heft_ms" if r["backend"] == "heft" else "single_device_ms"
            assert r["makespan_ms"] == pytest.approx(r[key], rel=1e-12)
            assert r["speedup_heft" if r["backend"] == "heft" else "speedup_single"] == pytest.approx(1.0)


def test_pointless_combinations_are_skipped_not_run(smoke_rows):
    skipped = {(r["graph"], r["backend"]): r["reason"] for r in smoke_rows if r["status"] == "skipped"}
    # 2 fully connected GPUs: one link, flow routing cannot differ from shortest
    assert skipped[("forkjoin-7-s0", "cbc/flow")].endswith("flow routing = shortest")
    # over the smoke cutoffs (12 ops with shortest routing, 7 with flow)
    assert skipped[("random-8-ccr10.0-s0", "highs/flow")].startswith(
        f"skipped: too large for the MILP ({disjunction_count(graphs.random_dag(8, ccr=10.0))} disjunctions;")
    assert ("random-8-ccr10.0-s0", "highs/shortest") not in skipped
    # a target case runs only its own back ends, and the others are not even listed
    assert {r["backend"] for r in smoke_rows if r["graph"] == "alexnet_b32"} == {"cpsat", "heft"}


def test_report_is_written(smoke_rows, tmp_path):
    import json

    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in smoke_rows))
    (tmp_path / "meta.json").write_text(json.dumps({"mode": "smoke", "time_limit_s": 3.0, "grace_s": 20.0,
                                                    "threads": 2, "seed": 0, "machine": machine_info()}))
    text = write_report(tmp_path).read_text()
    assert "## Targets (issue 6, item 3)" in text
    for png in ("time_to_optimality.png", "gap_over_time.png", "gap_vs_size.png"):
        assert (tmp_path / png).stat().st_size > 1000
        assert f"]({png})" in text


# --------------------------------------------------------------------------- exact pieces


def test_disjunction_count_is_the_number_of_unordered_pairs():
    assert disjunction_count(graphs.chain(6)) == 0
    # src, 3 independent ops, sink: the 3 middle ops are pairwise unordered
    assert disjunction_count(graphs.fork_join(5)) == 3
    two_chains = {"ops": [{"id": x} for x in "abcd"], "edges": [{"src": "a", "dst": "b"}, {"src": "c", "dst": "d"}]}
    assert disjunction_count(two_chains) == 4  # a-c, a-d, b-c, b-d


def test_skip_reasons():
    fc2, fc3 = graphs.fully_connected_hardware(2), graphs.fully_connected_hardware(3)
    small, big = Case("x", graphs.fork_join(5), fc3), Case("x", graphs.fork_join(100), fc3)
    assert skip_reason(small, Backend("cbc", "flow")) is None
    assert skip_reason(Case("x", graphs.fork_join(5), fc2), Backend("highs", "flow")).endswith("= shortest")
    reason = skip_reason(big, Backend("cbc", "shortest"))
    assert reason.startswith(f"skipped: too large for the MILP ({98 * 97 // 2} disjunctions;")
    assert skip_reason(big, Backend("cpsat")) is None and skip_reason(big, Backend("heft")) is None


def test_quick_and_full_cover_every_family_and_target():
    quick = build_cases(True, ["small", "layered", "chain", "fork_join", "random", "targets"])
    assert {c.family for c in quick} == {"small", "layered", "chain", "fork_join", "random", "targets"}
    tags = {t for c in quick for t in c.tags}
    assert tags == {"inception_4gpu", "inception_2gpu", "bert_2k", "layered100_2gpu"}
    inception = next(c for c in quick if "inception_2gpu" in c.tags)
    assert len(inception.graph["ops"]) >= 600 and [d["id"] for d in inception.hardware["devices"]] == ["gpu0", "gpu1"]
    bert = next(c for c in quick if "bert_2k" in c.tags)
    assert len(bert.graph["ops"]) >= 2000


def test_bert_per_head_keeps_bert_base_parameters():
    from placer.zoo import build

    per_head, zoo = graphs.bert_per_head(), build("bert_base")
    updates = lambda g: sum(op["memory_bytes"] for op in g["ops"] if op["id"].endswith(".update"))
    assert updates(per_head) == updates(zoo)  # same parameters, so the same optimizer state


def test_ratio_summary_is_a_geometric_mean():
    rows = [
        {"family": "f", "graph": "g1", "hardware": "h", "backend": "a", "status": "optimal", "makespan_ms": 2.0, "solve_time_s": 4.0},
        {"family": "f", "graph": "g1", "hardware": "h", "backend": "b", "status": "optimal", "makespan_ms": 2.0, "solve_time_s": 1.0},
        {"family": "f", "graph": "g2", "hardware": "h", "backend": "a", "status": "feasible", "makespan_ms": 4.0, "solve_time_s": 9.0},
        {"family": "f", "graph": "g2", "hardware": "h", "backend": "b", "status": "optimal", "makespan_ms": 1.0, "solve_time_s": 1.0},
    ]
    s = ratio_summary(rows, "a", "b")
    assert s["pairs"] == 2 and s["both_optimal"] == 1
    assert s["makespan"] == pytest.approx(2.0)  # sqrt(1 * 4)
    assert s["time"] == pytest.approx(4.0)
    assert (s["a_optimal"], s["b_optimal"]) == (1, 2)


def test_targets_read_the_tagged_rows():
    row = {"graph": "inception_v3_b32", "hardware": "q", "backend": "cpsat", "solver": "cpsat", "family": "targets",
           "tags": ["inception_4gpu"], "status": "feasible", "makespan_ms": 100.0, "lower_bound_ms": 99.5,
           "gap": 0.005, "heft_ms": 101.0, "violations": [], "ops": 808, "time_limit_s": 60.0}
    assert evaluate_targets([row], 60.0)[0].met is True
    assert evaluate_targets([{**row, "gap": 0.02, "lower_bound_ms": 98.0}], 60.0)[0].met is False
    assert evaluate_targets([{**row, "heft_ms": 99.9}], 60.0)[0].met is False  # worse than HEFT
    assert evaluate_targets([], 60.0)[0].met is None


# --------------------------------------------------------------------------- the hard deadline


def _spawn_and_hang(emit):
    child = subprocess.Popen(["sleep", "60"])
    emit({"kind": "pid", "pid": child.pid})
    time.sleep(60)


def _spawn_and_leave(emit):
    child = subprocess.Popen(["sleep", "60"])
    emit({"kind": "pid", "pid": child.pid})


def _gone(pid: int, wait_s: float = 3.0) -> bool:
    end = time.monotonic() + wait_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
        except (FileNotFoundError, ProcessLookupError):
            return True
        if state in "ZX":
            return True
        time.sleep(0.05)
    return False


def test_a_hung_solve_is_killed_with_its_process_group():
    began = time.monotonic()
    outcome = run_isolated(_spawn_and_hang, (), deadline_s=1.0)
    assert outcome.killed and time.monotonic() - began < 10
    pid = next(m["pid"] for m in outcome.messages if m["kind"] == "pid")
    assert _gone(pid)


def test_processes_left_behind_are_killed_and_counted():
    outcome = run_isolated(_spawn_and_leave, (), deadline_s=10.0)
    assert not outcome.killed and outcome.exit_code == 0
    assert outcome.leftovers_killed
    assert _gone(next(m["pid"] for m in outcome.messages if m["kind"] == "pid"))


def test_a_crash_in_the_child_is_reported():
    def boom(emit):
        raise RuntimeError("solver exploded")

    outcome = run_isolated(boom, (), deadline_s=10.0)
    assert outcome.exit_code == 1 and not outcome.killed
    assert "solver exploded" in outcome.messages[-1]["error"]


def test_machine_info_records_cores_and_versions():
    info = machine_info()
    assert info["nproc"] == len(os.sched_getaffinity(0))
    assert info["versions"]["ortools"] and info["versions"]["pulp"]
