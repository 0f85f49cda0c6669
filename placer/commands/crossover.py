"""`placer crossover CONFIG.json [-o OUT.json] [--plot FILE.png]`: when does hybrid DP x MP win?

Prints one line per device count (DP-only speedup, the best N x M split, its gain, the eq. 6
threshold per M), then the crossover point, the best scales and the device-count advice.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from placer.crossover.calculate import CrossoverReport
from placer.crossover.calculate import run as run_crossover
from placer.crossover.config import parse_config
from placer.schema import load_json

__all__ = ["add_parser", "format_report", "run"]


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:+.1f}%"


def format_report(report: CrossoverReport) -> str:
    """The human summary: a padded table and a few sentences."""
    ms = sorted(report.mp_speedup_sources)
    sources = ", ".join(
        f"SU^{m} = {report.mp_speedup_sources[m]['speedup']:.3f} ({report.mp_speedup_sources[m]['source']})"
        for m in ms
    )
    header = ["DEVICES", "EPOCHS", "SE", "DP-ONLY", "BEST HYBRID", "SPEEDUP", "GAIN"] + [
        f"EQ6 M={m}" for m in ms
    ]
    lines = [header]
    for row in report.rows:
        best = row.best_hybrid
        thresholds = {o.m: o.threshold for o in row.hybrids}
        lines.append(
            [
                str(row.devices),
                f"{row.dp_only.epochs:.3g}",
                f"{row.dp_only.scaling_efficiency:.3f}",
                f"{row.dp_only.speedup:.2f}",
                "-" if best is None else f"{best.n} x {best.m}",
                "-" if best is None else f"{best.speedup:.2f}",
                _pct(row.hybrid_gain),
            ]
            + ["-" if thresholds.get(m) is None else f"{thresholds[m]:.3f}" for m in ms]
        )
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    table = "\n".join("  ".join(cell.rjust(w) for cell, w in zip(line, widths)) for line in lines)

    best_dp = report.best_dp
    best_hybrid = report.best_hybrid
    out = [f"crossover: {report.name} ({sources}; E_1 = {report.epochs_1:.3g})", table, ""]
    if report.crossover_devices is None:
        out.append("crossover: none, DP alone is best at every device count given")
    else:
        out.append(f"crossover: a hybrid beats DP alone from {report.crossover_devices} devices")
    out.append(f"best DP-only: {best_dp.devices} devices, speedup {best_dp.dp_only.speedup:.2f}")
    if best_hybrid is not None:
        out.append(
            f"best hybrid: {best_hybrid.n}-way DP x {best_hybrid.m}-way MP on {best_hybrid.devices} "
            f"devices, speedup {best_hybrid.speedup:.2f} "
            f"({_pct(report.best_hybrid_gain_over_best_dp)} over the best DP-only)"
        )
    for advice in report.advice:
        out.append(
            f"advice ({advice.curve.replace('_', '-')}): {advice.fraction_of_best:.0%} of the best speedup "
            f"({advice.best_speedup:.2f}) from {advice.fraction_devices} devices; marginal speedup per "
            f"added device below {advice.min_marginal_speedup_per_device:g} after "
            f"{advice.marginal_devices} devices; "
            f"use {advice.recommended_devices}"
        )
    return "\n".join(out)


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "crossover",
        help="hybrid DP x MP crossover calculator",
        description="Project training speedup against device count for data parallelism alone and for "
        "N-way DP of M-way model-parallel workers (Pal et al., eqs. 1-6), find the crossover, and advise "
        "how many devices are worth using. CONFIG is a placer.crossover/v1 JSON document.",
    )
    parser.add_argument("config", metavar="CONFIG.json", help="placer.crossover/v1 document")
    parser.add_argument("-o", "--output", metavar="OUT.json", help="write placer.crossover-result/v1 here")
    parser.add_argument(
        "--plot", metavar="FILE.png", help="write the speedup chart as FILE.png and FILE.svg (Figure 5 style)"
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = parse_config(load_json(args.config))
    report = run_crossover(
        config,
        base_dir=Path(args.config).resolve().parent,
        progress=lambda message: print(f"placer: {message}", file=sys.stderr),
    )
    print(format_report(report))
    if args.output:
        Path(args.output).write_text(json.dumps(report.to_dict(), indent=2) + "\n")
    if args.plot:
        from placer.crossover.plot import plot_report  # matplotlib only when a plot is asked for

        for path in plot_report(report, args.plot):
            print(f"wrote {path}")
    return 0
