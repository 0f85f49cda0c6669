"""`placer serve`: run the REST service (FastAPI under uvicorn).

Host, port and worker count come from the flags, else from PLACER_HOST, PLACER_PORT and
PLACER_WORKERS, else 127.0.0.1:8000 with 2 workers. Every other setting is PLACER_* only
(docs/service.md lists them). `--workers` is the number of solve worker processes, i.e.
solves that run at once; the HTTP side is one asyncio process.
"""
from __future__ import annotations

import argparse
import sys

__all__ = ["add_parser", "run"]

SWITCH_INTERVAL_S = 0.0005


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="run the REST service",
        description="Serve the placer HTTP API (OpenAPI at /docs). Settings from PLACER_* variables; "
        "the flags override PLACER_HOST, PLACER_PORT and PLACER_WORKERS.",
    )
    parser.add_argument("--host", default=None, help="address to bind (PLACER_HOST, default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=None, help="port to bind (PLACER_PORT, default 8000)")
    parser.add_argument("--workers", type=int, default=None,
                        help="concurrent solves: worker processes, or tasks on the Ray cluster with "
                             "PLACER_EXECUTOR=ray (PLACER_WORKERS, default 2)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from placer.errors import InputError

    try:  # the service's packages load only here: `placer --help` stays fast without them
        import uvicorn

        from api.logs import configure_logging, log_config
        from api.main import create_app
        from api.settings import Settings
    except ImportError as exc:
        raise InputError(f"placer serve needs the service extra: pip install 'placer[service]' ({exc})") from None

    overrides = {k: v for k, v in (("host", args.host), ("port", args.port), ("workers", args.workers))
                 if v is not None}
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())
        raise InputError(f"serve: bad setting: {problems}") from None
    configure_logging(settings.log_level)
    # request work runs in threads (api/compute.py); a shorter GIL switch interval (5 ms by
    # default) lets the event loop answer /healthz and small requests between their slices
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_config=log_config(settings.log_level),
                access_log=False, timeout_graceful_shutdown=10, server_header=False)
    return 0
