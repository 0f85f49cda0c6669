"""Validity sweep of the decomposition's stitch and its component moves (relabelling).

    PYTHONPATH=. python benchmarks/reports/2026-11-26-relabel/stitch_sweep.py 300 > stitch_sweep.txt

Case i (random.Random(i)): a training step of a layered forward graph (20-70 ops before the
backward pass), in half the cases separated (forward and backward joined only by groups) or
in msr-fiddle's form; a tenth of the ops pinned in a third of the cases; on 2-4 fully
connected devices, a line of 3 or the DGX-1 preset, memory-tight in a quarter of the cases.
Each is decomposed and solved by parts (deterministic, 3 s); the answer must keep groups and
pins, never overflow memory more than the stitch it started from, re-time to its own makespan
and not be below the bound; the moved answer must not be longer than the stitch or its
resequencing. Every 10th case also runs through placer.engine.place (strict mode: an invalid
candidate is an error) and shared/tools/verify_result.py's checks (placer.validate).
"""
from __future__ import annotations

import json
import os
import random
import sys

os.environ.setdefault("PLACER_STRICT", "1")

from benchmarks.graphs import (  # noqa: E402
    fully_connected_hardware, layered, memory_tight, msr_form_training, separated_training, training_step)
from placer.budget import Budget  # noqa: E402
from placer.decompose import decompose, solve_decomposed  # noqa: E402
from placer.engine import PlaceOptions, place  # noqa: E402
from hardware_graphs import load_preset_document  # noqa: E402
from placer.heuristics import heft  # noqa: E402
from placer.model import build_problem  # noqa: E402
from placer.repair import is_placement_feasible, memory_overflow  # noqa: E402
from placer.schedule import retime  # noqa: E402
from placer.schema import parse_graph, parse_hardware  # noqa: E402
from placer.validate import check_result  # noqa: E402


def case(i: int) -> tuple[dict, dict, str]:
    rng = random.Random(i)
    doc = training_step(layered(rng.randint(20, 70), seed=i, ccr=rng.choice([0.3, 1.0, 3.0])))
    form = rng.choice(["joined", "separated", "msr"])
    doc = separated_training(doc) if form == "separated" else msr_form_training(doc) if form == "msr" else doc
    kind = rng.choice(["fc2", "fc3", "fc4", "line3", "dgx1"])
    if kind == "dgx1":
        hw = load_preset_document("dgx1_v100")
    elif kind == "line3":
        hw = {"devices": [{"id": "a"}, {"id": "b"}, {"id": "c"}],
              "links": [{"a": "a", "b": "b", "bandwidth_gb_per_s": 25.0},
                        {"a": "b", "b": "c", "bandwidth_gb_per_s": 10.0}]}
    else:
        hw = fully_connected_hardware(int(kind[2]), link_gb_per_s=rng.choice([10.0, 25.0]))
    names = [d["id"] for d in hw["devices"]]
    if rng.random() < 1 / 3:
        for op in doc["ops"]:
            if rng.random() < 0.1:
                op["device"] = rng.choice(names)
        # a group's ops must agree on their pin
        pin_of: dict[str, str] = {}
        for op in doc["ops"]:
            if op.get("group") and op.get("device"):
                pin_of.setdefault(op["group"], op["device"])
        for op in doc["ops"]:
            if op.get("group") in pin_of:
                op["device"] = pin_of[op["group"]]
    tight = rng.random() < 0.25
    if tight:
        hw = memory_tight(hw, doc)
    return doc, hw, f"{form} {kind}{' tight' if tight else ''}"


def main(n: int) -> int:
    failures = moved = checked = 0
    for i in range(n):
        doc, hw_doc, label = case(i)
        g, hw = parse_graph(doc), parse_hardware(hw_doc)
        p = build_problem(g, hw)
        dec = decompose(p)
        if dec is None or not dec.components:
            print(i, label, "no components")
            continue
        ans = solve_decomposed(p, dec, Budget(3, deterministic=True, threads=1), 3, heft(p).solution)
        s, st = ans.schedule, ans.stats
        problems = []
        if s is None:
            problems.append("no schedule")
        else:
            if not is_placement_feasible(p, s.solution.device):
                problems.append("groups or pins broken")
            if abs(retime(p, s.solution).makespan_ms - s.makespan_ms) > 1e-9 * max(1.0, s.makespan_ms):
                problems.append("does not re-time to its makespan")
            if s.makespan_ms < ans.bound_ms - 1e-9:
                problems.append(f"below the bound {ans.bound_ms}")
            if st.decomposition_relabelled_ms is not None:
                moved += 1
                before = min(st.decomposition_stitched_ms, st.decomposition_resequenced_ms or float("inf"))
                if st.decomposition_relabelled_ms > before + 1e-9:
                    problems.append("moved answer longer than the stitch")
            if sum(memory_overflow(p, s.solution.device)) and not p.memory_exceeds_a_device():
                problems.append("memory overflow where the graph fits every device")
        if i % 10 == 0:
            checked += 1
            try:
                r = place(g, hw, PlaceOptions(time_limit_s=4, threads=1, deterministic=True))
                errors = check_result(g, hw, r)
                if errors:
                    problems.append(f"engine answer invalid: {errors[:2]}")
            except Exception as exc:  # noqa: BLE001 - a sweep reports every failure
                problems.append(f"engine raised {type(exc).__name__}: {exc}")
        failures += bool(problems)
        print(i, label, p.n_ops, "ops", f"stitched {st.decomposition_stitched_ms} resequenced "
              f"{st.decomposition_resequenced_ms} moved {st.decomposition_relabelled_ms} "
              f"bound {ans.bound_ms:.4f}",
              "FAIL " + "; ".join(problems) if problems else "ok", flush=True)
    print(f"cases {n}, moved {moved}, through the engine {checked}, failures {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 300))
