"""`placer validate`: check a result document against its inputs."""
from __future__ import annotations

import argparse

from placer.resolve import resolve_graph, resolve_hardware
from placer.schema import load_json, parse_result
from placer.validate import check_result


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("validate", help="check a result against its graph and hardware",
                       description="Check every rule of a valid result; exit 1 listing violations.")
    p.add_argument("graph", help="dataflow graph, placer.graph/v1 JSON")
    p.add_argument("--hardware", required=True, metavar="HW", help="a placer.hardware/v1 file or preset name")
    p.add_argument("result", help="placer.result/v1 JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    graph = resolve_graph(args.graph)
    hardware = resolve_hardware(args.hardware)
    result = parse_result(load_json(args.result))
    violations = check_result(graph, hardware, result)
    for v in violations:
        print(f"INVALID {v}")
    if violations:
        return 1
    if result.makespan_ms is None:
        print(f"no schedule to check: status {result.status}")
    else:
        print(f"valid: makespan {result.makespan_ms:.6g} ms, status {result.status}")
    return 0
