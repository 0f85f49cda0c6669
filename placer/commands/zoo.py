"""`placer zoo MODEL [--batch N] [-o GRAPH.json]` and `placer zoo --list`: the analytic model zoo.

A model's graph is written as placer.graph/v1 JSON (to stdout without -o); the listing shows
every model's graph size, parameters, forward GFLOPs per sample and training memory at --batch.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from placer.commands._common import write_json
from placer.errors import InputError
from placer.zoo import DEFAULT_BATCH, ModelSummary, build, list_models, summarize

__all__ = ["add_parser", "format_table", "run"]

_HEADER = ["MODEL", "OPS", "EDGES", "PARAMS", "FWD GFLOP/SAMPLE", "MEMORY", "DESCRIPTION"]


def _row(s: ModelSummary) -> list[str]:
    return [
        s.name,
        str(s.ops),
        str(s.edges),
        f"{s.parameters:,}",
        f"{s.forward_flops_per_sample / 1e9:.2f}",
        f"{s.memory_bytes / 1e9:.2f} GB",
        s.description,
    ]


def format_table(rows: list[ModelSummary]) -> str:
    """A plain text table; the description column is last and free."""
    cells = [_HEADER] + [_row(s) for s in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_HEADER) - 1)]
    return "\n".join(
        "  ".join([cell.ljust(w) for cell, w in zip(line[:-1], widths)] + [line[-1]]).rstrip()
        for line in cells
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "zoo",
        help="write a model zoo training-step graph, or list the models",
        description="Build the training-step graph (forward, backward and weight-update ops, analytic "
        "FLOPs/bytes/memory) of a well-known model as placer.graph/v1 JSON, or list the models.",
    )
    parser.add_argument("model", nargs="?", metavar="MODEL", help=f"one of: {', '.join(list_models())}")
    parser.add_argument("--batch", type=int, default=DEFAULT_BATCH, metavar="N",
                        help=f"samples per training step (default {DEFAULT_BATCH})")
    parser.add_argument("-o", "--output", metavar="GRAPH.json", help="write the graph here (default: stdout)")
    parser.add_argument("--list", action="store_true", help="list the models (memory at --batch)")
    parser.add_argument("--json", action="store_true", help="with --list: print the listing as JSON")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.list:
        rows = [summarize(name, args.batch) for name in list_models()]
        if args.json:
            print(json.dumps([asdict(row) for row in rows], indent=2))
        else:
            print(f"training step at batch {args.batch}; GFLOP forward per sample; memory = weights, "
                  "gradients, momentum and saved activations")
            print(format_table(rows))
        return 0
    if args.model is None:
        raise InputError(f"zoo: name a MODEL ({', '.join(list_models())}) or give --list")
    graph = build(args.model, args.batch)
    if args.output:
        write_json(args.output, graph)
    else:
        print(json.dumps(graph, indent=2))
    return 0
