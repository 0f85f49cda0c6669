"""One big solve on 1, 2 and 4 workers: local processes (`placer solve --workers N`) and Ray
tasks on a loopback cluster (`placer solve --ray ADDRESS`). Records the gap reached within the
time limit and the decomposition's measured per-component times (the input of the README's
estimate for a bigger cluster).

    nice -n 10 python -m benchmarks.scaleout --out benchmarks/reports/DATE-scaleout [--time-limit 60]

Every answer is checked by placer.validate.check_result; the machine's load average is
recorded before each run (2 cores shared with other work: the numbers say what they are).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.graphs import bert_per_head, gpt_per_head, memory_tight
from benchmarks.ray_cluster import LocalRayCluster
from placer import zoo
from placer.engine import PlaceOptions, place
from placer.resolve import load_preset
from placer.schema import parse_graph, parse_hardware
from placer.validate import check_result

__all__ = ["CASES", "main"]


def _cases() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    dgx1 = load_preset("dgx1_v100").model_dump(mode="json")
    return {
        "bert_per_head on dgx1_v100": (bert_per_head(), dgx1),
        "gpt_per_head memory-tight on dgx1_v100": (gpt_per_head(), memory_tight(dgx1, gpt_per_head())),
        "inception_v3 on dgx1_v100": (zoo.build("inception_v3"), dgx1),
    }


# BERT per head (2,066 ops) and the hardest per-head case of the engine issue's family (memory-tight
# GPT on the DGX-1), whose components repeat (2 and 1 distinct); Inception-V3, whose 11 components
# have 10 shapes, is where solving components at once can pay
CASES = ("bert_per_head on dgx1_v100", "gpt_per_head memory-tight on dgx1_v100", "inception_v3 on dgx1_v100")


def run_one(name: str, graph_doc: dict[str, Any], hw_doc: dict[str, Any], workers: int, where: str,
            address: str | None, time_limit_s: float) -> dict[str, Any]:
    graph, hardware = parse_graph(graph_doc), parse_hardware(hw_doc)
    options = PlaceOptions(time_limit_s=time_limit_s, threads=1, workers=workers, ray_address=address)
    load = os.getloadavg()[0]
    began = time.perf_counter()
    result = place(graph, hardware, options)
    wall_s = time.perf_counter() - began
    problems = check_result(graph, hardware, result)
    stats = result.stats.model_dump() if result.stats is not None else {}
    return {
        "case": name, "where": where, "workers": workers, "time_limit_s": time_limit_s, "ops": len(graph.ops),
        "status": result.status, "makespan_ms": result.makespan_ms, "lower_bound_ms": result.lower_bound_ms,
        "gap": result.gap, "wall_s": round(wall_s, 2), "valid": not problems, "load_before": round(load, 2),
        **{k: stats.get(k) for k in ("decomposition_components", "decomposition_distinct_components",
                                     "decomposition_workers", "decomposition_places", "decomposition_first_pass_s",
                                     "decomposition_bound_ms", "decomposition_s")},
    }


def _report(rows: list[dict[str, Any]], out: Path, command: str) -> None:
    runs = (out / "commands.txt").read_text().splitlines() if (out / "commands.txt").exists() else [command]
    lines = ["# One big solve on more workers", "", "Commands:", "", *[f"    {c}" for c in runs], "",
             (f"Machine: {os.cpu_count()} cores ({platform.processor() or platform.machine()}), shared with other "
              "sessions' work; `load` is the 1-minute load average before each run. The loopback Ray cluster has "
              "two nodes of 2 CPUs each (as resources: both run on the same 2 cores)."), "",
             ("`workers` is the option given (`--workers`); `at once` the component solves the pool ran at once "
              "(with Ray and workers 1: as many as the cluster has CPUs); `places` the distinct processes or nodes "
              "they ran on."), "",
             ("| case | where | workers | at once | gap | makespan ms | bound ms | components (distinct) | places | "
              "first-pass s per distinct component | wall s | load |"),
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        gap = f"{100 * r['gap']:.2f}%" if r["gap"] is not None else "-"
        times = ", ".join(f"{x:.1f}" for x in (r["decomposition_first_pass_s"] or []))
        lines.append(f"| {r['case']} | {r['where']} | {r['workers']} | {r['decomposition_workers'] or 1} | {gap} | "
                     f"{r['makespan_ms']:.3f} | "
                     f"{r['lower_bound_ms']:.3f} | {r['decomposition_components']} "
                     f"({r['decomposition_distinct_components']}) | {r['decomposition_places'] or 1} | {times} | "
                     f"{r['wall_s']} | {r['load_before']} |")
    (out / "report.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.scaleout")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--cases", nargs="+", default=list(CASES), choices=CASES)
    parser.add_argument("--where", nargs="+", default=["local", "ray"], choices=["local", "ray"],
                        help="local processes, Ray tasks on a loopback cluster of two 2-CPU nodes, or both")
    parser.add_argument("--append", action="store_true", help="add to the results already in --out")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    command = "nice -n 10 python -m benchmarks.scaleout " + " ".join(argv if argv is not None else sys.argv[1:])
    commands = args.out / "commands.txt"
    with commands.open("a") as f:
        f.write(command + "\n")
    cases = _cases()
    results = args.out / "results.jsonl"
    rows: list[dict[str, Any]] = ([json.loads(line) for line in results.read_text().splitlines() if line]
                                  if args.append and results.exists() else [])
    if not args.append:
        results.write_text("")

    def record(row: dict[str, Any]) -> None:
        rows.append(row)
        with results.open("a") as f:
            f.write(json.dumps(row) + "\n")
        print(json.dumps({k: row[k] for k in ("case", "where", "workers", "gap", "wall_s", "valid")}), flush=True)
        _report(rows, args.out, command)

    if "local" in args.where:
        for name in args.cases:
            graph_doc, hw_doc = cases[name]
            for workers in args.workers:
                record(run_one(name, graph_doc, hw_doc, workers, "local", None, args.time_limit))
    if "ray" in args.where:
        cluster = LocalRayCluster().start([2, 2])
        try:
            for name in args.cases:
                graph_doc, hw_doc = cases[name]
                for workers in args.workers:
                    record(run_one(name, graph_doc, hw_doc, workers, "ray", cluster.address, args.time_limit))
        finally:
            import ray

            ray.shutdown()
            cluster.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
