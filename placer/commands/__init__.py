"""One module per `placer` sub-command; each exposes `add_parser(subparsers)`.

`add_parser` registers the sub-command and sets `func` to a callable taking the parsed
arguments and returning the process exit code.
"""
