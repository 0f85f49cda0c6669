"""`placer presets [NAME]`: list the bundled hardware presets, or print one as JSON.

The listing parses every preset, so a broken preset file shows up here as an error naming it
rather than later in the middle of a solve.
"""
from __future__ import annotations

import argparse
import json
from dataclasses import asdict, dataclass
from typing import Any

import hardware_graphs
from placer.resolve import load_preset
from placer.schema import HardwareSpec

__all__ = ["PresetSummary", "load_preset", "summarize", "table_row", "format_table", "add_parser", "run"]


@dataclass(frozen=True)
class PresetSummary:
    """One row of the listing. Per-device figures are the distinct values, in device order
    (one value for the bundled presets, whose devices are all alike)."""

    name: str
    devices: int
    kinds: list[str]
    memory_bytes: list[int | None]
    peak_tflops: list[float | None]
    switches: int
    links: int
    description: str


def _distinct(values: list[Any]) -> list[Any]:
    return list(dict.fromkeys(values))


def summarize(name: str, spec: HardwareSpec) -> PresetSummary:
    """The listing row of one parsed preset."""
    return PresetSummary(
        name=name,
        devices=len(spec.devices),
        kinds=_distinct([d.kind for d in spec.devices]),
        memory_bytes=_distinct([d.memory_bytes for d in spec.devices]),
        peak_tflops=_distinct([d.peak_tflops for d in spec.devices]),
        switches=len(spec.switches),
        links=len(spec.links),
        description=spec.description or "",
    )


def _gb(memory_bytes: int | None) -> str:
    return "?" if memory_bytes is None else f"{memory_bytes / 1e9:g} GB"


def _tflops(peak: float | None) -> str:
    return "?" if peak is None else f"{peak:g}"


def table_row(row: PresetSummary) -> list[str]:
    """The cells of one row as `placer presets` prints them (memory in decimal GB)."""
    return [
        row.name,
        str(row.devices),
        "/".join(row.kinds),
        "/".join(_gb(m) for m in row.memory_bytes),
        "/".join(_tflops(p) for p in row.peak_tflops),
        str(row.switches),
        str(row.links),
        row.description,
    ]


_HEADER = ["NAME", "DEVICES", "KIND", "MEMORY", "PEAK TFLOP/S", "SWITCHES", "LINKS", "DESCRIPTION"]


def format_table(rows: list[PresetSummary]) -> str:
    """A plain text table, columns padded to their widest cell; the description column is last and free."""
    cells = [_HEADER] + [table_row(row) for row in rows]
    widths = [max(len(line[i]) for line in cells) for i in range(len(_HEADER) - 1)]
    return "\n".join(
        "  ".join([cell.ljust(width) for cell, width in zip(line[:-1], widths)] + [line[-1]]).rstrip()
        for line in cells
    )


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "presets",
        help="list the bundled hardware presets, or print one",
        description="List the hardware presets shipped with placer (use a name wherever --hardware "
        "takes a file), or print preset NAME as placer.hardware/v1 JSON.",
    )
    parser.add_argument("name", nargs="?", metavar="NAME", help="print this preset's JSON document")
    parser.add_argument("--json", action="store_true", help="print the listing as JSON instead of a table")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.name is not None:
        load_preset(args.name)  # unknown or broken presets fail here, with a message naming them
        print(json.dumps(hardware_graphs.load_preset_document(args.name), indent=2))
        return 0
    rows = [summarize(name, load_preset(name)) for name in hardware_graphs.preset_names()]
    if args.json:
        print(json.dumps([asdict(row) for row in rows], indent=2))
    else:
        print(format_table(rows))
    return 0
