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


# --------------------------------------------------------------------------- issue 10: real and hard families


def _dag(doc: dict) -> bool:
    ids = {op["id"] for op in doc["ops"]}
    succs: dict[str, list[str]] = {i: [] for i in ids}
    indegree = dict.fromkeys(ids, 0)
    for e in doc["edges"]:
        succs[e["src"]].append(e["dst"])
        indegree[e["dst"]] += 1
    ready = [i for i, d in indegree.items() if d == 0]
    seen = 0
    while ready:
        seen += 1
        for v in succs[ready.pop()]:
            indegree[v] -= 1
            if indegree[v] == 0:
                ready.append(v)
    return seen == len(ids)


def _components(doc: dict) -> int:
    parent = {op["id"]: op["id"] for op in doc["ops"]}

    def find(x: str) -> str:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for e in doc["edges"]:
        parent[find(e["src"])] = find(e["dst"])
    return len({find(x) for x in parent})


def _packs(groups: list[int], bins: int, capacity: int) -> bool:
    """First-fit decreasing: a witness that the groups fit `bins` devices of `capacity`."""
    free = [capacity] * bins
    for size in sorted(groups, reverse=True):
        k = next((k for k in range(bins) if free[k] >= size), None)
        if k is None:
            return False
        free[k] -= size
    return True


@pytest.fixture(scope="module")
def hard_graphs() -> dict[str, dict]:
    from placer.zoo import build

    return {
        "separated": graphs.separated_training(build("inception_v3")),
        "msr_form": graphs.msr_form_training(build("gnmt")),
        "nasnet": graphs.nasnet_cells(),
        "bert": graphs.bert_per_head(),
        "gpt": graphs.gpt_per_head(),
        "unet_small": graphs.unet(depth=4, convs_per_level=2),
        "unet": graphs.unet(depth=6, convs_per_level=9),
    }


SIZES = {"separated": (800, 820), "msr_form": (250, 280), "nasnet": (2000, 2500), "bert": (2000, 2100), "gpt": (1900, 2100),
         "unet_small": (150, 400), "unet": (900, 1000)}


@pytest.mark.parametrize("name", sorted(SIZES))
def test_hard_generators_make_valid_training_graphs(hard_graphs, name):
    from placer.schema import parse_graph

    doc = hard_graphs[name]
    parse_graph(doc)  # the schema: ids, edges, costs
    assert _dag(doc), name
    low, high = SIZES[name]
    assert low <= len(doc["ops"]) <= high, (name, len(doc["ops"]))
    assert all(op.get("time_ms") is not None or op.get("flops") is not None for op in doc["ops"])
    assert sum(op.get("memory_bytes", 0) for op in doc["ops"]) > 0
    # every backward op shares its forward op's group
    groups = {op["id"]: op.get("group") for op in doc["ops"]}
    backward = [op for op in doc["ops"] if op["id"].endswith(".bwd")]
    assert len(backward) > len(doc["ops"]) / 3
    for op in backward:
        assert op["group"] is not None and op["group"] == groups[op["id"][:-4]], op["id"]


def test_hard_generators_are_deterministic():
    assert graphs.nasnet_cells(2, seed=3) == graphs.nasnet_cells(2, seed=3)
    assert graphs.nasnet_cells(2, seed=3)["edges"] != graphs.nasnet_cells(2, seed=4)["edges"]
    assert graphs.unet(4, 2) == graphs.unet(4, 2)
    assert graphs.gpt_per_head(layers=2) == graphs.gpt_per_head(layers=2)


def test_nasnet_cells_have_parallel_branches_and_skip_inputs(hard_graphs):
    doc = hard_graphs["nasnet"]
    adds = [op["id"] for op in doc["ops"] if op["id"].endswith(".add")]
    assert len(adds) == 5 * 26  # 5 blocks in each of 3 x 8 normal + 2 reduction cells
    # a cell reads the cell two back: cell5's first input adjusts cell3's concat
    assert {"src": "cell3.concat", "dst": "cell5.in0.relu"} in [{k: e[k] for k in ("src", "dst")} for e in doc["edges"]]


def test_unet_has_long_skips(hard_graphs):
    doc = hard_graphs["unet"]
    srcs = {e["src"] for e in doc["edges"] if e["dst"] == "dec0.concat"}
    assert srcs == {"enc0.conv8.relu", "dec0.up"}


def test_separated_training_splits_forward_from_backward(hard_graphs):
    from placer.zoo import build

    whole, doc = build("inception_v3"), hard_graphs["separated"]
    assert _components(whole) == 1 and _components(doc) == 2
    forward = {op["id"] for op in doc["ops"] if not op["id"].endswith((".bwd", ".update"))}
    assert not [e for e in doc["edges"] if e["src"] in forward and e["dst"] not in forward]
    assert {op["id"] for op in doc["ops"]} == {op["id"] for op in whole["ops"]}
    assert len(doc["edges"]) < len(whole["edges"])


def test_msr_form_runs_the_gradients_in_layer_order(hard_graphs):
    from placer.zoo import build

    whole, doc = build("gnmt"), hard_graphs["msr_form"]
    assert _components(doc) == 2 and _dag(doc)
    before = {(e["src"], e["dst"]) for e in whole["edges"]}
    turned = [(e["src"], e["dst"]) for e in doc["edges"] if e["src"].endswith(".bwd") and e["dst"].endswith(".bwd")]
    assert turned and all((dst, src) in before for src, dst in turned)
    updates = [(e["src"], e["dst"]) for e in doc["edges"] if e["dst"].endswith(".update")]
    assert updates and all((src, dst) in before for src, dst in updates)


@pytest.mark.parametrize("name", sorted(SIZES))
def test_memory_tight_hardware_fits_the_graph_but_not_one_device(hard_graphs, name):
    import hardware_graphs
    from placer.schema import parse_hardware

    doc = hard_graphs[name]
    groups = list(graphs.group_memory(doc).values())
    for hw in (graphs.v100_nvlink(4), hardware_graphs.load_preset_document("dgx1_v100")):
        tight = graphs.memory_tight(hw, doc)
        parse_hardware(tight)
        capacity = {d["memory_bytes"] for d in tight["devices"]}
        assert len(capacity) == 1
        cap = capacity.pop()
        assert tight["name"].endswith("-tight") and len(tight["devices"]) == len(hw["devices"])
        assert cap >= 1.05 * max(groups) and cap >= 1.15 * sum(groups) / len(hw["devices"]) - 1
        assert sum(groups) > cap  # not on one device
        assert _packs(groups, len(hw["devices"]), cap)  # but on the machine


def test_memory_tight_answers_fit(hard_graphs):
    from placer.engine import PlaceOptions, place
    from placer.schema import parse_graph, parse_hardware
    from placer.validate import check_result

    graph = parse_graph(hard_graphs["unet_small"])
    hardware = parse_hardware(graphs.memory_tight(graphs.v100_nvlink(4), hard_graphs["unet_small"]))
    result = place(graph, hardware, PlaceOptions(solver="heft"))
    assert result.status == "feasible" and check_result(graph, hardware, result) == []
    assert len({entry.device for entry in result.schedule}) > 1


def test_v100_nvlink_machine():
    from placer.schema import parse_hardware

    hw = parse_hardware(graphs.v100_nvlink(4))
    assert len(hw.devices) == 4 and len(hw.links) == 6
    assert {(d.memory_bytes, d.peak_tflops) for d in hw.devices} == {(32_000_000_000, 15.7)}


def test_real_graphs_import():
    from benchmarks.solvers import REAL_GRAPHS, import_real, real_graph_files
    from placer.schema import parse_graph

    files = real_graph_files()
    if not files:
        pytest.skip(f"no real graphs in {REAL_GRAPHS}")
    assert {kind for kind, _ in files} == {"pipedream", "msr"}
    for kind, path in files:
        doc = import_real(kind, path)
        parse_graph(doc)
        assert doc["name"].startswith(f"{kind}-") and any(op.get("group") for op in doc["ops"])


def test_real_family_is_skipped_with_a_message_when_the_data_is_missing(tmp_path, capsys):
    assert build_cases(True, ["real"], real_graphs=tmp_path / "nowhere") == []
    assert "family 'real' skipped" in capsys.readouterr().err


def test_real_and_hard_cases_run_every_mode():
    from benchmarks.solvers import MODES, planned_runs, select_cases

    full = build_cases(False, ["hard"])
    assert 22 <= len(full) <= 28
    assert sum(c.memory_tight for c in full) == len(full) // 2
    assert all(c.modes == MODES and c.backends == ("cpsat", "heft") for c in full)
    assert [c for c in full if "inception_quad_loaded" in c.tags]
    other = build_cases(True, ["chain"])
    assert all(c.modes == ("idle",) for c in other)
    assert all(c.modes == ("loaded",) for c in build_cases(True, ["chain", "hard"], modes=["loaded"]))
    runs = planned_runs(full[0], [Backend("cpsat"), Backend("heft")])
    assert runs == [("idle", Backend("cpsat")), ("idle", Backend("heft")), ("loaded", Backend("cpsat")),
                    ("deterministic", Backend("cpsat"))]
    picked = select_cases(full, match=["unet"], limit=2)
    assert len(picked) == 2 and all("unet" in c.name for c in picked)


def test_deterministic_mode_passes_the_option(monkeypatch):
    import benchmarks.solvers as bench
    from benchmarks.solvers import run_one

    seen = []

    def fake(fn, args, deadline_s):
        seen.append(args[2])
        return bench.ChildOutcome([], killed=False, exit_code=1, wall_s=0.0)

    monkeypatch.setattr(bench, "run_isolated", fake)
    case = Case("hard", graphs.chain(3), graphs.fully_connected_hardware(2))
    rows = [run_one(case, Backend("cpsat"), 1.0, mode=mode) for mode in ("idle", "deterministic")]
    assert "deterministic" not in seen[0] and seen[1]["deterministic"] is True
    assert [r["mode"] for r in rows] == ["idle", "deterministic"]


def test_the_competitor_is_killed_on_errors():
    from benchmarks.solvers import busy_competitor

    with pytest.raises(RuntimeError), busy_competitor() as info:
        pid = info["competitor_pid"]
        assert not _gone(pid, 0.2)
        raise RuntimeError("solve failed")
    assert _gone(pid)


def test_real_and_hard_quick_run_end_to_end(tmp_path):
    import json

    from benchmarks.solvers import main

    assert main(["--families", "real", "hard", "--quick", "--time-limit", "1", "--limit", "1", "--grace", "20",
                 "--out", str(tmp_path)]) == 0
    rows = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    families = {r["family"] for r in rows}
    assert "hard" in families
    for family in families:
        mine = [r for r in rows if r["family"] == family]
        assert sorted((r["backend"], r["mode"]) for r in mine) == [
            ("cpsat", "deterministic"), ("cpsat", "idle"), ("cpsat", "loaded"), ("heft", "idle")]
        for r in mine:
            assert r["status"] in ("optimal", "feasible") and r["violations"] == [], (r["graph"], r["mode"])
            assert r["makespan_ms"] <= r["heft_ms"] * (1 + 1e-9)
            assert not r["leftovers_killed"]
        loaded = next(r for r in mine if r["mode"] == "loaded")
        assert loaded["competitor_nice"] is not None and _gone(loaded["competitor_pid"])
    text = (tmp_path / "report.md").read_text()
    assert "## Real and hard families (issue 10, item 5)" in text and "### hard on v100x4_nvlink" in text
    assert "gap (idle / loaded / deterministic)" in text
    assert (tmp_path / "gap_over_time_hard.png").stat().st_size > 1000
    assert "](gap_over_time_hard.png)" in text
