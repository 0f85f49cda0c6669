"""`placer demo`: place the bundled example graph on the bundled 4-GPU machine."""
from __future__ import annotations

import argparse
from importlib import resources

from placer.commands._common import EXIT_BY_STATUS
from placer.engine import PlaceOptions, place
from placer.resolve import resolve_graph, resolve_hardware
from placer.summary import format_summary

EXAMPLE_GRAPH = "inception_mini.json"
EXAMPLE_HARDWARE = "4gpu_nvlink.json"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("demo", help="place the bundled example (an Inception-style training step on 4 GPUs)")
    p.add_argument("--solver", default="cpsat", choices=["cpsat", "cbc", "highs", "heft"])
    p.add_argument("--time-limit", type=float, default=20.0, metavar="SECONDS")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    examples = resources.files("placer") / "examples"
    graph = resolve_graph(str(examples / EXAMPLE_GRAPH))
    hardware = resolve_hardware(str(examples / EXAMPLE_HARDWARE))
    print(f"placer demo: {EXAMPLE_GRAPH} on {EXAMPLE_HARDWARE} (files in {examples})")
    result = place(graph, hardware, PlaceOptions(solver=args.solver, time_limit_s=args.time_limit))
    print(format_summary(result, graph, hardware))
    return EXIT_BY_STATUS[result.status]
