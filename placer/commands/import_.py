"""`placer import {onnx,torch,pipedream,msr} SOURCE -o GRAPH.json`: other tools' graphs as placer.graph/v1.

The module is `import_` because `import` is a keyword; the sub-command is `import`. It prints
a one-line summary on stdout and each importer warning on stderr.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from placer.errors import InputError
from placer.importers import GraphTotals, ImportResult, import_graph

__all__ = ["add_parser", "run", "summary_line"]


def _add_common(parser: argparse.ArgumentParser, source_help: str) -> None:
    parser.add_argument("source", metavar="SOURCE", help=source_help)
    parser.add_argument(
        "-o", "--output", required=True, metavar="GRAPH.json",
        help="where to write the placer.graph/v1 document ('-' for stdout)",
    )
    parser.add_argument("--name", help="graph name (default: from the source)")


def _add_analytic(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--training", action="store_true",
                        help="emit a training step: forward, backward (same group) and weight updates")
    parser.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="adam",
                        help="optimizer of the weight-update ops with --training (default: adam)")
    parser.add_argument(
        "--keep-views", action="store_true",
        help="keep zero-cost view ops (reshape, squeeze, getitem, ...) instead of folding them",
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "import",
        help="convert an ONNX or PyTorch model, a PipeDream profile or a dnn-partitioning file",
        description="Convert a model or a profile from another tool into a placer.graph/v1 document.",
    )
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")

    onnx = kinds.add_parser(
        "onnx",
        help="an ONNX model: analytic FLOPs and bytes per op",
        description="Import an .onnx model with shape inference; ops carry flops, bytes_accessed "
        "and their weights as memory.",
    )
    _add_common(onnx, "the .onnx file")
    onnx.add_argument("--dim", action="append", default=[], metavar="NAME=SIZE",
                      help="value of a symbolic input dimension, e.g. --dim batch=32 (repeatable)")
    _add_analytic(onnx)

    torch = kinds.add_parser(
        "torch",
        help="a PyTorch model via torch.export (needs placer[torch])",
        description="Import a PyTorch model. SOURCE is MODULE:CALLABLE or FILE.py:CALLABLE; "
        "the callable returns (model, example_inputs).",
    )
    _add_common(torch, "MODULE:CALLABLE or FILE.py:CALLABLE returning (model, example_inputs)")
    _add_analytic(torch)
    torch.add_argument("--profile", action="store_true",
                       help="measure every op on a real device and write its time_ms (profiled mode) "
                            "beside the analytic flops and bytes")
    torch.add_argument("--device", default="cpu", help="device to profile on: cpu, cuda:0, ... (default cpu)")
    torch.add_argument("--repeat", type=int, default=5,
                       help="timed runs per op after 2 warm-up runs; the median is kept (default 5)")
    torch.add_argument("--hardware", metavar="HW",
                       help="with --profile: compare with the analytic time on this hardware's first "
                            "device (a placer.hardware/v1 file or a preset name)")

    pipedream = kinds.add_parser("pipedream", help="a PipeDream profiler graph.txt (profiled times)",
                                 description="Import a PipeDream profile as a training step: forward and "
                                 "backward op per layer, activation bytes on edges.")
    _add_common(pipedream, "the graph.txt file")
    pipedream.add_argument("--zero-input-time", action="store_true",
                           help="drop the Input layer's time (it is data loading, not compute)")

    msr = kinds.add_parser("msr", help="a msr-fiddle/dnn-partitioning JSON input (profiled times)",
                           description="Import a dnn-partitioning input file: fpgaLatency as time, "
                           "colorClass as group, size as memory and edge bytes.")
    _add_common(msr, "the JSON file")
    msr.add_argument("--count-backward-memory", action="store_true",
                     help="count the size of backward nodes that share a forward node's class too")
    parser.set_defaults(func=run)


def _options(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {"name": args.name}
    if args.kind in ("onnx", "torch"):
        options.update(training=args.training, optimizer=args.optimizer, keep_views=args.keep_views)
    if args.kind == "onnx":
        from placer.importers.onnx_model import parse_dims

        options["dims"] = parse_dims(args.dim)
    if args.kind == "pipedream":
        options["zero_input_time"] = args.zero_input_time
    if args.kind == "msr":
        options["count_backward_memory"] = args.count_backward_memory
    return options


def _size(nbytes: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if nbytes >= scale:
            return f"{nbytes / scale:.3g} {unit}"
    return f"{nbytes:.0f} B"


def summary_line(kind: str, source: str, totals: GraphTotals, warnings: int) -> str:
    """ops, edges, total time or GFLOPs, memory, edge bytes and the warning count on one line."""
    work = []
    if totals.time_ms is not None:
        work.append(f"{totals.time_ms:.6g} ms total time")
    if totals.flops is not None:
        work.append(f"{totals.flops / 1e9:.6g} GFLOPs")
    return (
        f"imported {kind} {source}: {totals.ops} ops, {totals.edges} edges, {', '.join(work)}, "
        f"{_size(totals.memory_bytes)} memory, {_size(totals.edge_bytes)} on edges, "
        f"{warnings} warning{'' if warnings == 1 else 's'}"
    )


def _write(result: ImportResult, output: str) -> None:
    text = json.dumps(result.document, indent=1)
    if output == "-":
        sys.stdout.write(text + "\n")
        return
    try:
        Path(output).write_text(text + "\n")
    except OSError as exc:
        raise InputError(f"cannot write {output}: {exc.strerror}") from None


def _profiled(args: argparse.Namespace) -> ImportResult:
    """Import a PyTorch model and profile its ops; prints the profiled/analytic ratio per kind."""
    from placer.importers.result import finish
    from placer.importers.torch_capture import capture_torch
    from placer.importers.torch_model import import_torch
    from placer.importers.torch_profile import profile_torch
    from placer.resolve import resolve_hardware

    reference = resolve_hardware(args.hardware).devices[0] if args.hardware else None
    capture = capture_torch(args.source, args.name)
    options = {k: v for k, v in _options(args).items() if k != "name"}
    imported = import_torch(capture, name=args.name, **options)
    document = dict(imported.document)
    rows = profile_torch(capture, document, device=args.device, repeat=args.repeat,
                         optimizer=args.optimizer, reference=reference)
    where = f" vs analytic on {reference.id} ({args.hardware})" if reference else ""
    print(f"profiled on {args.device} (median of {args.repeat}){where}:", file=sys.stderr)
    for row in rows:
        ratio = f"  ratio {row.ratio:8.3g}" if row.ratio is not None else ""
        analytic = f"  analytic {row.analytic_ms:10.4g} ms" if row.analytic_ms is not None else ""
        print(f"  {row.kind:<28} {row.ops:4d} ops  profiled {row.profiled_ms:10.4g} ms{analytic}{ratio}",
              file=sys.stderr)
    return finish(document, imported.warnings)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "profile", False):
        result = _profiled(args)
    else:
        if args.kind == "torch" and (args.hardware or args.device != "cpu" or args.repeat != 5):
            raise InputError("--device, --repeat and --hardware apply only with --profile")
        result = import_graph(args.kind, args.source, **_options(args))
    for warning in result.warnings:
        print(f"placer: warning: {warning}", file=sys.stderr)
    _write(result, args.output)
    line = summary_line(args.kind, args.source, result.totals, len(result.warnings))
    print(line, file=sys.stderr if args.output == "-" else sys.stdout)
    return 0
