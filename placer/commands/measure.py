"""`placer measure SOURCE RESULT.json`: run the placed model, compare its step time with the plan."""
from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from placer.commands._common import write_json
from placer.errors import InputError
from placer.schema import load_json

__all__ = ["add_parser", "parse_devices", "run"]


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "measure", help="run a plan on real devices and compare its step time with the prediction",
        description="Export the plan (as `placer export torch`), run it for N steps and report the "
        "measured step time against the plan's makespan and the simulator's (needs placer[torch]).")
    p.add_argument("source", metavar="SOURCE", help="MODULE:CALLABLE or FILE.py:CALLABLE")
    p.add_argument("result", metavar="RESULT.json", help="the plan (placer.result/v1)")
    p.add_argument("--devices", metavar="JSON",
                   help='plan device -> torch device, as JSON or a JSON file: {"gpu0": "cuda:0", ...} '
                        "(default: every plan device on cpu)")
    p.add_argument("--steps", type=int, default=10, help="measured steps (default 10; the median is reported)")
    p.add_argument("--warmup", type=int, default=2, help="steps run before measuring (default 2)")
    p.add_argument("--optimizer", choices=("sgd", "momentum", "adam"), default="adam",
                   help="optimizer of the step when the plan has .update ops (default: adam)")
    p.add_argument("-o", "--output", metavar="OUT.json", help="write the measurement as JSON")
    p.set_defaults(func=run)


def parse_devices(text: str | None) -> dict[str, str] | None:
    """--devices as inline JSON or a JSON file."""
    if text is None:
        return None
    raw: Any
    if text.lstrip().startswith("{"):
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"--devices: not JSON: {exc.msg} at column {exc.colno}") from None
    elif Path(text).is_file():
        raw = load_json(text)
    else:
        raise InputError(f"--devices {text!r}: neither a JSON object nor a file")
    if not isinstance(raw, dict):
        raise InputError("--devices: expected a JSON object {plan device: torch device}")
    return raw


def run(args: argparse.Namespace) -> int:
    from placer.export.measure import measure_plan
    from placer.export.plan import read_plan
    from placer.importers.torch_capture import capture_torch

    plan = read_plan(load_json(args.result), what=str(args.result))
    devices = parse_devices(args.devices)
    capture = capture_torch(args.source)
    m = measure_plan(capture, plan, devices=devices, steps=args.steps, warmup=args.warmup,
                     optimizer=args.optimizer)
    step = "training step" if m.training else "forward pass"
    print(f"measured  {m.measured_ms:.4g} ms per {step} (median of {m.steps}; "
          f"min {m.min_ms:.4g}, max {m.max_ms:.4g})")
    for label, value, error in (("predicted", m.predicted_ms, m.predicted_error_pct),
                                ("simulated", m.simulated_ms, m.simulated_error_pct)):
        if value is not None:
            print(f"{label}  {value:.4g} ms  (error {error:+.1f}% of the measurement)")
    mapped = ", ".join(f"{k}->{v}" for k, v in m.devices.items())
    print(f"devices   {mapped}")
    if m.serial:
        print("note      several plan devices share one torch device: their ops ran one after another, "
              "so this is the serial step time, not the plan's; map each plan device to its own GPU "
              "to check the prediction")
    if args.output:
        write_json(args.output, m.to_dict())
    return 0
