"""Argument helpers and outputs shared by the sub-commands."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from placer.cli import EXIT_INFEASIBLE, EXIT_NO_SOLUTION, EXIT_OK
from placer.schema import GraphSpec
from placer.simulator import SimulationReport

EXIT_BY_STATUS = {"optimal": EXIT_OK, "feasible": EXIT_OK, "infeasible": EXIT_INFEASIBLE, "no_solution": EXIT_NO_SOLUTION}


def add_inputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("graph", help="dataflow graph, placer.graph/v1 JSON")
    p.add_argument("--hardware", required=True, metavar="HW",
                   help="hardware graph: a placer.hardware/v1 file or a preset name (see `placer presets`)")


def add_outputs(p: argparse.ArgumentParser) -> None:
    p.add_argument("--trace", metavar="TRACE.json", help="write a Chrome trace (open it in Perfetto)")
    p.add_argument("--gantt", metavar="GANTT.png", help="write a Gantt chart")


def write_json(path: str | Path, doc: Any) -> None:
    Path(path).write_text(json.dumps(doc, indent=2) + "\n")
    print(f"wrote {path}", file=sys.stderr)


def write_pictures(args: argparse.Namespace, report: SimulationReport, title: str,
                   graph: GraphSpec | None = None) -> None:
    """The trace and the Gantt chart asked for; `graph` adds op kinds and groups to both."""
    if args.trace:
        write_json(args.trace, report.to_chrome_trace(graph))
    if args.gantt:
        from placer.plots import write_gantt

        write_gantt(report, args.gantt, title, graph)
        print(f"wrote {args.gantt}", file=sys.stderr)
