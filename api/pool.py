"""One solve worker process, driven from the service with a deadline enforced from outside.

The worker runs in its own session (process group): at the deadline, on cancel, or when it
misbehaves, `kill()` sends SIGKILL to the whole group, so a CBC child that overruns its own
time limit dies with it. The worker's last progress event carries the best validated result,
which is what the service returns when the worker had to be killed.
"""
from __future__ import annotations

import json
import logging
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from api.errors import WorkerStartError
from solvers.processes import group_alive, kill_group, reap_group

__all__ = ["Outcome", "WorkerProcess", "WorkerStartError", "become_subreaper", "group_alive"]

log = logging.getLogger("api.pool")

# The directory holding the `api` package, so `python -m api.worker` imports this very code.
_PROJECT_ROOT = str(Path(__file__).resolve().parent.parent)


@dataclass
class Outcome:
    """How one solve in a worker ended.

    kind: "done" (result), "error" (the target raised: error holds type/code/detail/input),
    "deadline" (killed at time limit + grace), "cancelled" (killed on request),
    "crashed" (the worker died by itself: exit code in `detail`), "lost" (the machine running
    the solve went away: a cluster node died; the job is run again, api.ray_executor).
    """

    kind: Literal["done", "error", "deadline", "cancelled", "crashed", "lost"]
    elapsed_s: float
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    last_progress: dict[str, Any] | None = None
    detail: str = ""


def become_subreaper() -> bool:
    """Make this process adopt its orphaned descendants (Linux PR_SET_CHILD_SUBREAPER).

    A killed worker's CBC child is then re-parented to the service, which reaps it at once
    (`WorkerProcess.kill`) instead of leaving a zombie until init gets to it; in a container
    whose PID 1 does not reap, this is what keeps the process table clean.
    """
    if not sys.platform.startswith("linux"):
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.prctl(36, 1, 0, 0, 0) == 0  # PR_SET_CHILD_SUBREAPER
    except (OSError, AttributeError):
        return False


class WorkerProcess:
    """A warm worker: started once, then fed one solve at a time by `run`."""

    def __init__(self, target: str, env: Mapping[str, str] | None = None) -> None:
        self.target = target
        self._env = dict(os.environ if env is None else env)
        self._env["PYTHONPATH"] = os.pathsep.join(
            p for p in (_PROJECT_ROOT, self._env.get("PYTHONPATH", "")) if p
        )
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._proc: subprocess.Popen[bytes] | None = None
        self.log_context: dict[str, Any] = {}  # request id and job of the solve running now

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc else None

    def where(self) -> dict[str, Any]:
        """Where this worker runs, as the job document's `worker` shows it."""
        return {"executor": "local", "node_id": None, "host": socket.gethostname(), "pid": self.pid}

    def start(self, timeout_s: float) -> None:
        """Spawn the worker and wait for its "ready" line (imports done)."""
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "api.worker", "--target", self.target],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=self._env,
            start_new_session=True,  # own session and process group: killpg reaches CBC too
            close_fds=True,
        )
        threading.Thread(target=self._read, args=(self._proc,), daemon=True,
                         name=f"worker-{self._proc.pid}-reader").start()
        threading.Thread(target=self._forward_stderr, args=(self._proc,), daemon=True,
                         name=f"worker-{self._proc.pid}-stderr").start()
        try:
            event = self._events.get(timeout=timeout_s)
        except queue.Empty:
            self.kill()
            raise WorkerStartError(f"solve worker did not start within {timeout_s:g} s") from None
        if event is None or event.get("event") != "ready":
            code = self._proc.wait()
            self.kill()
            raise WorkerStartError(f"solve worker exited while starting (exit code {code})")

    def _read(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            try:
                self._events.put(json.loads(raw))
            except ValueError:
                log.warning("worker wrote a line that is not JSON", extra={"worker_pid": proc.pid})
        proc.stdout.close()
        self._events.put(None)  # EOF: the worker is gone

    def _forward_stderr(self, proc: subprocess.Popen[bytes]) -> None:
        """The worker's stderr (tracebacks, warnings) as JSON log lines of the service."""
        assert proc.stderr is not None
        for raw in proc.stderr:
            line = raw.decode("utf-8", "replace").rstrip()
            if line:
                log.info(line, extra={"worker_pid": proc.pid, **self.log_context})
        proc.stderr.close()

    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def run(
        self,
        request: Mapping[str, Any],
        deadline_s: float,
        on_progress: Callable[[dict[str, Any]], None],
        cancelled: threading.Event,
        on_start: Callable[[dict[str, Any]], None] | None = None,
    ) -> Outcome:
        """Run one solve; at `deadline_s` seconds, or once `cancelled` is set, kill the worker.
        `on_start(where)` is called once the solve runs."""
        if not self.alive():
            raise WorkerStartError("solve worker is not running")
        assert self._proc is not None and self._proc.stdin is not None
        if on_start is not None:
            on_start(self.where())
        started = time.monotonic()
        last: dict[str, Any] | None = None
        try:
            self._proc.stdin.write(json.dumps(dict(request), allow_nan=False).encode() + b"\n")
            self._proc.stdin.flush()
        except (BrokenPipeError, OSError):
            return self._crashed(started, last)
        while True:
            remaining = deadline_s - (time.monotonic() - started)
            if cancelled.is_set():
                self.kill()
                return Outcome("cancelled", time.monotonic() - started, last_progress=last)
            if remaining <= 0:
                self.kill()
                return Outcome("deadline", time.monotonic() - started, last_progress=last,
                               detail=f"killed at the deadline of {deadline_s:g} s")
            try:
                event = self._events.get(timeout=min(remaining, 0.1))
            except queue.Empty:
                continue
            if event is None:
                return self._crashed(started, last)
            kind = event.get("event")
            if kind == "progress":
                last = event
                on_progress(event)
            elif kind == "done":
                return Outcome("done", time.monotonic() - started, result=event.get("result"), last_progress=last)
            elif kind == "error":
                return Outcome("error", time.monotonic() - started, error=event, last_progress=last)

    def _crashed(self, started: float, last: dict[str, Any] | None) -> Outcome:
        code = self._proc.wait() if self._proc else None
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        self.kill()
        return Outcome("crashed", time.monotonic() - started, last_progress=last,
                       detail=f"the solve worker died ({how})")

    def kill(self, wait_s: float = 5.0) -> bool:
        """SIGKILL the worker's process group and reap the worker; True when the group is gone."""
        if self._proc is None:
            return True
        pgid = self._proc.pid  # session leader: its pid is the group id
        kill_group(pgid)
        try:
            self._proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            log.error("solve worker survived SIGKILL", extra={"worker_pid": pgid})
        try:
            if self._proc.stdin:
                self._proc.stdin.close()
        except OSError:
            pass
        # Children of the worker (CBC) are re-parented to us (subreaper) or to init; reap them.
        end = time.monotonic() + wait_s
        while True:
            reap_group(pgid)
            if not group_alive(pgid) or time.monotonic() >= end:
                break
            time.sleep(0.01)
        gone = not group_alive(pgid)
        if not gone:
            log.error("processes of a killed worker's group are still present", extra={"pgid": pgid})
        return gone

    def stop(self) -> None:
        """Close stdin (the worker exits when idle) and make sure the group is gone."""
        self.kill(wait_s=2.0)
