"""`placer bench`: the solver benchmark (benchmarks/solvers.py) from the command line.

The benchmark scripts live in the source checkout's `benchmarks/` directory, not in the
installed package: with an editable install (or from the checkout) they are found next to
`placer/`; otherwise `placer bench` says so and exits with code 2.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from types import ModuleType

from placer.errors import InputError

__all__ = ["add_parser", "run"]

_CHECKOUT = Path(__file__).resolve().parents[2]


def _benchmarks() -> ModuleType | None:
    """benchmarks.solvers, importing it from the checkout that holds this package if needed."""
    try:
        return importlib.import_module("benchmarks.solvers")
    except ModuleNotFoundError as exc:
        if exc.name not in ("benchmarks", "benchmarks.solvers"):
            raise
    if not (_CHECKOUT / "benchmarks" / "solvers.py").is_file():
        return None
    sys.path.append(str(_CHECKOUT))  # the CLI process only: the checkout's top-level packages
    return importlib.import_module("benchmarks.solvers")


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bench",
        help="run the solver benchmark and write a report",
        description="Run every back end on synthetic graph families, the model zoo and imported graphs; "
        "write results.jsonl, report.md and PNG plots (see benchmarks/README.md).",
    )
    module = _benchmarks()
    if module is not None:
        module.add_arguments(parser)
    else:
        parser.add_argument("rest", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    module = _benchmarks()
    if module is None:
        raise InputError(f"bench: the benchmark scripts (benchmarks/solvers.py) are not in {_CHECKOUT}; "
                         "run `placer bench` from a source checkout of placer")
    return int(module.run(args))
