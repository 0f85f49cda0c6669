"""Split-operator benchmark (issue 12): the zoo at two batch sizes on three machines, each
solved with `split=True`, against one device, data parallelism and the placement-only engine.

    nice -n 10 python -m benchmarks.split --time-limit 20 --out benchmarks/reports/DATE-split
    python -m benchmarks.split --models alexnet --machines dgx1_v100_quad --batches 32 --time-limit 5

Rows go to results.jsonl as they finish (an interrupted run keeps what it measured); report.md
is rewritten after every row: speedups over one device for data parallelism, placement only and
the split plan, the split plan's proven gap, its validity (the project's validator), and the
checks of the issue: never slower than either baseline, strictly faster than both where asked.
"""
from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

from placer.engine import PlaceOptions, place
from placer.resolve import resolve_hardware
from placer.schema import parse_graph
from placer.validate import check_result
from placer.zoo import build

MODELS = ("alexnet", "vgg16", "resnet50", "inception_v3", "gnmt", "biglstm", "bert_base")
MACHINES = ("dgx1_v100_quad", "dgx1_v100", "dgx_a100")
BATCHES = (32, 64)
STRICTLY_FASTER = ("alexnet", "vgg16", "gnmt", "biglstm")  # the issue: faster than both baselines


def run_one(model: str, machine: str, batch: int, time_limit_s: float) -> dict[str, Any]:
    graph = parse_graph(build(model, batch))
    hardware = resolve_hardware(machine)
    began = time.perf_counter()
    result = place(graph, hardware, PlaceOptions(split=True, time_limit_s=time_limit_s))
    wall = time.perf_counter() - began
    violations = check_result(graph, hardware, result) if result.makespan_ms is not None else ["no plan"]
    base = result.baselines
    splits = result.splits or {}
    ways: dict[str, int] = {}
    for s in splits.values():
        ways[f"{s.dim}x{s.degree}"] = ways.get(f"{s.dim}x{s.degree}", 0) + 1
    return {
        "model": model, "machine": machine, "batch": batch, "time_limit_s": time_limit_s, "wall_s": round(wall, 2),
        "status": result.status, "makespan_ms": result.makespan_ms, "lower_bound_ms": result.lower_bound_ms,
        "gap": result.gap, "single_device_ms": result.single_device_ms,
        "data_parallel_ms": base.data_parallel_ms if base else None,
        "placement_only_ms": base.placement_only_ms if base else None,
        "best_from": result.stats.best_from if result.stats else None, "valid": not violations,
        "violations": violations[:3], "splits": ways,
        "collective_ms": result.stats.collective_ms if result.stats else None,
        "solver_status": result.stats.solver_status if result.stats else None,
    }


def _ms(x: float | None) -> str:
    return f"{x:.3f}" if x is not None else "does not fit"


def _x(single: float | None, ms: float | None) -> str:
    return f"{single / ms:.2f}x" if single and ms else "n/a"


def write_report(rows: list[dict[str, Any]], out: Path, command: str) -> None:
    lines = [
        "# Split operators on the zoo (issue 12)", "",
        f"Command: `{command}`", "",
        (f"Machine: {platform.machine()}, Python {platform.python_version()}, 2 cores shared with other work. "
        "Speedups are over one device (the best single-device time); DP = data parallelism (every splittable "
        "op sample-split over all devices, gradients all-reduced by a ring); PO = the placement-only engine "
        "(30% of the limit); split = the answer of `place(split=True)`; gap = (makespan - proven bound) / "
        "makespan, the bound valid for every plan of the configuration space (docs/split.md)."), "",
        ("| model | machine | batch | 1 device ms | DP ms | PO ms | split ms | DP | PO | split | gap | from | valid | "
         "<= DP, PO | < both | splits |"),
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        ms, dp, po = r["makespan_ms"], r["data_parallel_ms"], r["placement_only_ms"]
        never_slower = ms is not None and (dp is None or ms <= dp + 1e-9) and (po is None or ms <= po + 1e-9)
        strictly = ms is not None and (dp is None or ms < dp - 1e-9) and (po is None or ms < po - 1e-9)
        ask = " (asked)" if r["model"] in STRICTLY_FASTER else ""
        ways = ", ".join(f"{k} {v}" for k, v in sorted(r["splits"].items()))
        gap = f"{100 * r['gap']:.2f}%" if r["gap"] is not None else "n/a"
        lines.append(
            f"| {r['model']} | {r['machine']} | {r['batch']} | {_ms(r['single_device_ms'])} | {_ms(dp)} | "
            f"{_ms(po)} | {_ms(ms)} | {_x(r['single_device_ms'], dp)} | {_x(r['single_device_ms'], po)} | "
            f"{_x(r['single_device_ms'], ms)} | {gap} | {r['best_from']} | "
            f"{'yes' if r['valid'] else 'NO'} | {'yes' if never_slower else 'NO'} | "
            f"{'yes' if strictly else 'no'}{ask} | {ways} |")
    lines += ["", ("Speedups are n/a where the model fits no single device (BigLSTM on 16 GB V100s); "
              "\"< both\" compares with data parallelism and the placement-only answer.")]
    (out / "report.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS))
    parser.add_argument("--machines", nargs="+", default=list(MACHINES))
    parser.add_argument("--batches", nargs="+", type=int, default=list(BATCHES))
    parser.add_argument("--time-limit", type=float, default=60.0)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--report-only", action="store_true", help="rewrite report.md from results.jsonl")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python -m benchmarks.split " + " ".join(sys.argv[1:] if argv is None else argv)
    if args.report_only:
        rows = [json.loads(line) for line in (args.out / "results.jsonl").read_text().splitlines() if line]
        first = rows[0] if rows else {"time_limit_s": args.time_limit}
        write_report(rows, args.out, f"nice -n 10 python -m benchmarks.split --time-limit {first['time_limit_s']:g} "
                     f"--out {args.out}")
        return 0
    rows: list[dict[str, Any]] = []
    with (args.out / "results.jsonl").open("a") as sink:
        for batch in args.batches:
            for machine in args.machines:
                for model in args.models:
                    row = run_one(model, machine, batch, args.time_limit)
                    rows.append(row)
                    sink.write(json.dumps(row) + "\n")
                    sink.flush()
                    write_report(rows, args.out, command)
                    print(f"{model} {machine} b{batch}: {row['makespan_ms']:.3f} ms (DP {row['data_parallel_ms']}, "
                          f"PO {row['placement_only_ms']}) gap {row['gap']:.4f} valid {row['valid']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
