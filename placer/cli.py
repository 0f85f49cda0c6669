"""The `placer` command line: one sub-command per module in placer.commands.

Exit codes (DESIGN.md, README "Exit codes"): 0 a solution, 2 bad input, 3 infeasible, 4 no
solution, 5 the solver back end is not available here, 1 any other failure (a failing back
end, or a bug), always with a one-line message and no traceback. Errors map to codes in
one table, `EXIT_CODES`, over the error tree of `placer.errors`.
"""
from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from placer.errors import InputError, PlacerError, SolverUnavailableError

__all__ = ["EXIT_BACKEND_UNAVAILABLE", "EXIT_BAD_INPUT", "EXIT_CODES", "EXIT_FAILURE", "EXIT_INFEASIBLE",
           "EXIT_NO_SOLUTION", "EXIT_OK", "exit_code", "main"]

EXIT_OK = 0
EXIT_BAD_INPUT = 2
EXIT_INFEASIBLE = 3
EXIT_NO_SOLUTION = 4
EXIT_BACKEND_UNAVAILABLE = 5  # install the back end, or pick another with --solver
EXIT_FAILURE = 1  # a back end failed or a bug: the message says which

# The one table: walk the exception's MRO, the first class listed wins (subclasses first).
EXIT_CODES: dict[type[BaseException], int] = {
    InputError: EXIT_BAD_INPUT,
    SolverUnavailableError: EXIT_BACKEND_UNAVAILABLE,
    PlacerError: EXIT_FAILURE,
}


def exit_code(exc: BaseException) -> int:
    """The exit code of an error per EXIT_CODES; EXIT_FAILURE for anything else."""
    return next((EXIT_CODES[c] for c in type(exc).__mro__ if c in EXIT_CODES), EXIT_FAILURE)

# Sub-command modules in placer.commands, in the order `placer --help` lists them.
COMMANDS = ("solve", "simulate", "validate", "demo", "presets", "crossover", "import_", "export", "measure", "zoo",
            "serve", "bench")


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
    except KeyboardInterrupt:
        print("placer: interrupted", file=sys.stderr)
        return 130
    except InputError as exc:  # one line per problem, each naming its field
        print(f"placer: error: {exc}", file=sys.stderr)
        return exit_code(exc)
    except PlacerError as exc:
        message = " ".join(str(exc).split())  # one line, whatever the back end said
        print(f"placer: error ({exc.code}): {message}", file=sys.stderr)
        return exit_code(exc)
    except Exception as exc:  # a bug: say so plainly, the traceback only on request
        if os.environ.get("PLACER_DEBUG"):
            raise
        print(f"placer: internal error: {type(exc).__name__}: {exc} (set PLACER_DEBUG=1 for the traceback, "
              "and please report it with the inputs)", file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":
    sys.exit(main())
