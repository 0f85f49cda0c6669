"""A solve worker process: `python -m api.worker --target module:function`.

The service starts it with `start_new_session=True`, so the worker leads its own process
group and everything it starts (CBC runs as a child process) dies with one `killpg`.

Protocol, one JSON object per line. In on stdin: one request document per solve.
Out on the original stdout: `{"event": "ready"}` once imports are done, then per solve any
number of `{"event": "progress", ...}` and one `{"event": "done", "result"}` or
`{"event": "error", "type", "code", "detail", "input"}`. Anything else that writes to stdout
(a solver's log) is redirected to stderr so it cannot break the protocol.

The target is called as `target(request, progress)` with the request document and returns
the answer document; `progress(dict)` forwards an event to the service.
"""
from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from typing import Any, TextIO

__all__ = ["finite", "load_target", "main"]

Target = Callable[[dict[str, Any], Callable[[dict[str, Any]], None]], dict[str, Any]]


def load_target(spec: str) -> Target:
    """Import `module:function`; call the module's `warm_up()` first when it has one."""
    module_name, _, name = spec.partition(":")
    if not module_name or not name:
        raise ValueError(f"target {spec!r} is not of the form module:function")
    module = importlib.import_module(module_name)
    warm_up = getattr(module, "warm_up", None)
    if callable(warm_up):
        warm_up()
    return getattr(module, name)


def _watch_parent(parent_pid: int, period_s: float = 0.5) -> None:
    """Kill this worker's whole process group once the service that started it is gone.

    A killed service cannot kill its workers (they are in their own sessions); without this
    an orphaned worker, and its CBC child, would solve on for nobody.
    """
    while True:
        time.sleep(period_s)
        if os.getppid() != parent_pid:
            os.killpg(os.getpgrp(), signal.SIGKILL)


class _Channel:
    """Thread-safe writer of protocol lines (progress can come from a solver's thread)."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()

    def send(self, doc: dict[str, Any]) -> None:
        line = json.dumps(finite(doc), allow_nan=False, default=str)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()


def finite(value: Any) -> Any:
    """The document with NaN and infinities as null (JSON has neither)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value


def _error_event(exc: BaseException) -> dict[str, Any]:
    """An error as a protocol event: an error of the tree keeps its class name and code, so
    the service rebuilds the same class (`api.errors.rebuild_worker_error`); anything else
    is a worker failure."""
    from placer.errors import InputError, PlacerError

    if isinstance(exc, PlacerError):
        return {"event": "error", "type": type(exc).__name__, "code": exc.code, "detail": str(exc),
                "input": isinstance(exc, InputError)}
    return {"event": "error", "type": type(exc).__name__, "code": "worker_failed",
            "detail": f"{type(exc).__name__}: {exc}", "input": False}


def serve(target: Target, requests: TextIO, channel: _Channel) -> None:
    """Answer solve requests until stdin closes."""
    channel.send({"event": "ready", "pid": os.getpid()})
    for line in requests:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            result = target(req, lambda ev: channel.send({"event": "progress", **ev}))
            channel.send({"event": "done", "result": result})
        except Exception as exc:  # noqa: BLE001  every failure becomes an answer; the service decides its HTTP code
            traceback.print_exc(file=sys.stderr)
            channel.send(_error_event(exc))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m api.worker")
    parser.add_argument("--target", required=True, help="module:function to call per solve")
    args = parser.parse_args(argv)
    channel = _Channel(os.fdopen(os.dup(1), "w", encoding="utf-8"))
    os.dup2(2, 1)  # fd 1 (inherited by CBC and friends) now goes to stderr
    sys.stdout = sys.stderr
    threading.Thread(target=_watch_parent, args=(os.getppid(),), daemon=True).start()
    target = load_target(args.target)
    serve(target, sys.stdin, channel)
    return 0


if __name__ == "__main__":
    sys.exit(main())
