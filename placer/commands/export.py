"""`placer export torch SOURCE RESULT.json -o PLACED.py`: a plan as a module PyTorch runs."""
from __future__ import annotations

import argparse
import sys

from placer.schema import load_json

__all__ = ["add_parser", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "export", help="write a plan as code a framework runs (placer export torch)",
        description="Apply a plan to the model it was made from and write the result as code.")
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND")
    torch = kinds.add_parser(
        "torch", help="a PyTorch model: a Python file defining build_placed(devices=None)",
        description="Write a self-contained Python file whose build_placed(devices=None, model=None) "
        "returns a torch.fx GraphModule running every op on its planned device (needs placer[torch]).")
    torch.add_argument("source", metavar="SOURCE",
                       help="MODULE:CALLABLE or FILE.py:CALLABLE, as given to `placer import torch`")
    torch.add_argument("result", metavar="RESULT.json",
                       help="the plan: a placer.result/v1 document from `placer solve`, or {op: device}")
    torch.add_argument("-o", "--output", required=True, metavar="PLACED.py", help="where to write the file")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from placer.export.plan import read_plan
    from placer.export.torch_file import write_placed_file
    from placer.importers.torch_capture import capture_torch

    plan = read_plan(load_json(args.result), what=str(args.result))
    capture = capture_torch(args.source)
    path = write_placed_file(capture, plan, args.source, str(args.result), args.output)
    splits = f", {len(plan.splits)} split op(s)" if plan.splits else ""
    print(f"wrote {path}: {capture.name} on {len(plan.devices)} device(s) ({', '.join(plan.devices)}){splits}; "
          f"build_placed(devices=None) returns the placed module", file=sys.stdout)
    return 0
