"""Processes: how a solve that runs in its own group (CBC included) is checked and killed, and
how a solve runs in a forked child that is killed when it overruns its deadline."""
from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["Overrun", "children", "group_alive", "group_members", "kill_group", "kill_tree", "reap_group",
           "run_forked"]


def group_alive(pgid: int) -> bool:
    """Whether any process (zombies included) is left in process group `pgid`."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


def kill_group(pgid: int) -> None:
    """SIGKILL every process of group `pgid`; a group already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def group_members(pgid: int, zombies: bool = True) -> list[tuple[int, str]]:
    """(pid, command name) of every process in process group `pgid`, from /proc (exited
    processes not yet reaped too, unless `zombies` is False)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[2]) == pgid and (zombies or fields[0] != "Z"):
            found.append((int(entry.name), comm))
    return found


def reap_group(pgid: int) -> None:
    """Reap every exited process of group `pgid` that is our child (adopted ones too, when this
    process is a subreaper)."""
    while True:
        try:
            pid, _ = os.waitpid(-pgid, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def children(pid: int) -> list[int]:
    """The child processes of `pid` (Linux /proc; every thread's children)."""
    found: list[int] = []
    for listing in Path(f"/proc/{pid}/task").glob("*/children"):
        with contextlib.suppress(OSError):
            found += [int(c) for c in listing.read_text().split()]
    return found


def kill_tree(pid: int, reap_s: float = 0.2) -> None:
    """SIGKILL `pid` and its descendants, and reap `pid` (our child).

    The descendants die first while `pid` lives, so that `pid` reaps them (CBC under PuLP's
    Popen.wait) instead of leaving zombies to whoever adopts them; `pid` is stopped meanwhile
    so that it starts nothing new.
    """
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGSTOP)
    stack, below = children(pid), []
    while stack:
        child = stack.pop()
        below.append(child)
        stack += children(child)
    for child in below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)
    if below:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        end = time.monotonic() + reap_s
        while time.monotonic() < end and any(c in children(pid) for c in below):
            time.sleep(0.01)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)


class Overrun(Exception):
    """`run_forked`: the call did not finish by its deadline and was killed (not an error:
    the caller answers with what it already holds)."""


def _send(fd: int, outcome: tuple[str, Any]) -> None:
    try:
        data = pickle.dumps(outcome)
    except Exception as exc:  # noqa: BLE001  an unpicklable answer is reported as such
        data = pickle.dumps(("error", RuntimeError(f"unpicklable answer: {exc}")))
    with os.fdopen(fd, "wb") as out:
        out.write(data)


def run_forked(call: Callable[[], Any], deadline_s: float) -> Any:
    """`call()` in a forked child (same process group, so whoever kills ours kills it too);
    its answer, or its exception re-raised here; `Overrun` when it is not done `deadline_s`
    seconds from now, after killing it and everything it started.

    Fork before the solver libraries start threads in this process: the child gets a copy of
    the model for free, and a solver that ignores its own limit (CBC reading the model,
    HiGHS in presolve) or Python building its model can be stopped on time.
    """
    end = time.monotonic() + deadline_s
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: answer, then leave without running the parent's exit handlers
        status = 0
        try:
            os.close(read_fd)
            try:
                outcome: tuple[str, Any] = ("ok", call())
            except BaseException as exc:  # noqa: BLE001  re-raised in the parent
                outcome = ("error", exc)
            _send(write_fd, outcome)
        except BaseException:  # noqa: BLE001
            status = 1
        finally:
            os._exit(status)
    os.close(write_fd)
    chunks: list[bytes] = []
    finished = False
    try:
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            ready, _, _ = select.select([read_fd], [], [], left)
            if not ready:
                continue
            chunk = os.read(read_fd, 1 << 20)
            if not chunk:
                finished = True
                break
            chunks.append(chunk)
    finally:
        os.close(read_fd)
        if not finished:
            kill_tree(pid)
    if not finished:
        raise Overrun(f"killed after {deadline_s:.2f} s")
    _, wait_status = os.waitpid(pid, 0)
    if not chunks:
        code = os.waitstatus_to_exitcode(wait_status)
        raise RuntimeError(f"the solver process died without an answer (exit code {code})")
    kind, payload = pickle.loads(b"".join(chunks))
    if kind == "error":
        raise payload
    return payload
