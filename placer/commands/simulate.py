"""`placer simulate`: replay a placement, optionally with link contention."""
from __future__ import annotations

import argparse
from dataclasses import replace

from placer.commands._common import add_inputs, add_outputs, write_json, write_pictures
from placer.replay import parse_placement_document, replay
from placer.resolve import resolve_graph, resolve_hardware
from placer.schema import load_json


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="replay a placement event by event",
                       description="Replay a placement: per-device queues, routed transfers, optional link contention.")
    add_inputs(p)
    p.add_argument("--placement", required=True, metavar="PLACEMENT.json",
                   help="a placer.result/v1 document (its placement, per-device order and routes are replayed), "
                        '{"placement": {op: device}, "order": {device: [op, ...]}} (order optional) '
                        "or a bare map {op: device}")
    p.add_argument("--contention", action="store_true", help="one transfer at a time per link direction (FIFO)")
    p.add_argument("--fifo", action="store_true",
                   help="ignore any given order: each device runs its ready ops first come, first served")
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the simulation report")
    add_outputs(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    graph = resolve_graph(args.graph)
    hardware = resolve_hardware(args.hardware)
    raw = load_json(args.placement)
    if isinstance(raw, dict) and raw.get("splits") is not None:  # a split plan (docs/split.md)
        from placer.schema import parse_result
        from placer.split.report import replay_split

        report = replay_split(graph, hardware, parse_result(raw), contention=args.contention)
    else:
        plan = parse_placement_document(raw, what=str(args.placement))
        if args.fifo:
            plan = replace(plan, order=None)
        report = replay(graph, hardware, plan, contention=args.contention)
    print(f"simulated makespan {report.makespan_ms:.6g} ms ({report.policy} order, "
          f"{'with' if report.contention else 'no'} link contention)")
    for device, util in report.device_utilisation.items():
        print(f"  {device:<14} busy {report.device_busy_ms[device]:10.4f} ms  utilisation {100 * util:5.1f}%")
    for link in sorted(report.link_bytes):
        print(f"  {link:<24} {report.link_bytes[link]:>14d} bytes  busy {report.link_busy_ms[link]:.4f} ms")
    if args.output:
        write_json(args.output, report.to_dict())
    write_pictures(args, report, f"{graph.name} on {hardware.name}", graph)
    return 0
