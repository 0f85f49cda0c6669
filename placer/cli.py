"""The `placer` command line: one sub-command per module in placer.commands.

Exit codes (DESIGN.md): 0 a solution, 2 bad input, 3 infeasible, 4 no solution, 1 a failure
(a missing or failing back end, or a bug), always with a one-line message and no traceback.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from placer.errors import InputError, PlacerError
from solvers.base import SolverError

__all__ = ["EXIT_BAD_INPUT", "EXIT_FAILURE", "EXIT_INFEASIBLE", "EXIT_NO_SOLUTION", "EXIT_OK", "main"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INFEASIBLE = 3
EXIT_NO_SOLUTION = 4
EXIT_FAILURE = 1  # a back end failed or a bug: the message says which

# Sub-command modules in placer.commands, in the order `placer --help` lists them.
COMMANDS = ("solve", "simulate", "validate", "demo", "presets", "crossover", "import_", "zoo", "serve", "bench")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="placer",
        description="Optimal device placement for deep-learning training steps.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMANDS:
        importlib.import_module(f"placer.commands.{name}").add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except InputError as exc:
        print(f"placer: error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("placer: interrupted", file=sys.stderr)
        return 130
    except (PlacerError, SolverError) as exc:
        print(f"placer: error ({exc.code}): {exc}", file=sys.stderr)
        return EXIT_FAILURE
    except Exception as exc:  # a bug: say so plainly, the traceback only on request
        if os.environ.get("PLACER_DEBUG"):
            raise
        print(f"placer: internal error: {type(exc).__name__}: {exc} (set PLACER_DEBUG=1 for the traceback, "
              "and please report it with the inputs)", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
