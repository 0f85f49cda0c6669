"""The hostile campaign's plumbing: a raw HTTP/1.1 client that can send anything (bad Host,
duplicate keys, lying lengths) and tells a reset from an answer, and a real `placer serve`
on a loopback port whose every process the campaign can find and kill.

Nothing here waits without a timeout: every socket read has a deadline and every process
is killed by pid when the campaign ends.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.serving import free_port
from solvers.processes import children

__all__ = ["Reply", "Service", "alive", "send"]

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Reply:
    """One request's outcome. `error` is None for an answer, else `reset` (the connection was
    reset or closed without a full answer), `timeout` or `refused`."""

    status: int | None
    headers: dict[str, str]
    body: bytes
    elapsed_s: float
    error: str | None = None
    keepalive: str | None = None  # after the answer, GET /healthz on the same connection: ok/broken/closed

    def json(self) -> Any:
        import json

        try:
            return json.loads(self.body)
        except ValueError:
            return None


def _read_reply(sock: socket.socket, deadline: float) -> tuple[int, dict[str, str], bytes]:
    """Read one HTTP/1.1 response (Content-Length, chunked, or until close) before `deadline`.
    Buffers grow in place: a crossover answer can be hundreds of MB."""
    buf = bytearray()

    def more() -> None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise TimeoutError
        sock.settimeout(remaining)
        chunk = sock.recv(1 << 20)
        if not chunk:
            raise ConnectionResetError("closed")
        buf.extend(chunk)

    while b"\r\n\r\n" not in buf:
        more()
    end = buf.index(b"\r\n\r\n")
    lines = bytes(buf[:end]).decode("latin-1").split("\r\n")
    del buf[:end + 4]
    status = int(lines[0].split(" ", 2)[1])
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if "content-length" in headers:
        size = int(headers["content-length"])
        while len(buf) < size:
            more()
        return status, headers, bytes(buf[:size])
    if headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            while b"\r\n" not in buf:
                more()
            cut = buf.index(b"\r\n")
            size = int(bytes(buf[:cut]).split(b";")[0], 16)
            del buf[:cut + 2]
            while len(buf) < size + 2:
                more()
            body.extend(buf[:size])
            del buf[:size + 2]
            if size == 0:
                return status, headers, bytes(body)
    while True:  # until the server closes
        try:
            more()
        except ConnectionResetError:
            return status, headers, bytes(buf)


def send(port: int, method: str, target: str, body: bytes = b"", headers: Mapping[str, str | None] | None = None,
         timeout_s: float = 10.0, chunked: bool = False, raw: bytes | None = None,
         check_keepalive: bool = True) -> Reply:
    """Send one request on a fresh connection and read the answer.

    `headers` overrides the defaults (Host, Content-Type for a body, Content-Length); a value of
    None leaves that header out. `raw` sends these bytes as the whole request instead. The body
    is sent from a thread while the answer is read, so an early 413 is seen even when the server
    stops reading. With `check_keepalive`, a GET /healthz follows on the same connection."""
    defaults: dict[str, str | None] = {"host": f"127.0.0.1:{port}"}
    if body or method in ("POST", "PUT", "PATCH"):
        defaults["content-type"] = "application/json"
        if chunked:
            defaults["transfer-encoding"] = "chunked"
        else:
            defaults["content-length"] = str(len(body))
    for name, value in (headers or {}).items():
        defaults[name.lower()] = value
    if raw is None:
        lines = [f"{method} {target} HTTP/1.1"] + [f"{k}: {v}" for k, v in defaults.items() if v is not None]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1", "replace")
        if chunked:
            step = 1 << 20
            payload = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + step]), body[i:i + step])
                               for i in range(0, len(body), step)) + b"0\r\n\r\n"
        else:
            payload = body
        data = head + payload
    else:
        data = raw
    began = time.monotonic()
    deadline = began + timeout_s
    try:
        sock = socket.create_connection(("127.0.0.1", port), timeout=min(timeout_s, 5.0))
    except ConnectionRefusedError:
        return Reply(None, {}, b"", time.monotonic() - began, error="refused")
    except OSError as exc:
        return Reply(None, {}, b"", time.monotonic() - began, error=f"connect: {exc}")
    sent = {"ok": False}

    def push() -> None:
        try:
            sock.sendall(data)
            sent["ok"] = True
        except OSError:
            pass

    sender = threading.Thread(target=push, daemon=True)
    try:
        sender.start()
        try:
            status, rheaders, rbody = _read_reply(sock, deadline)
        except TimeoutError:
            return Reply(None, {}, b"", time.monotonic() - began, error="timeout")
        except (ConnectionError, OSError, ValueError, IndexError):
            return Reply(None, {}, b"", time.monotonic() - began, error="reset")
        reply = Reply(status, rheaders, rbody, time.monotonic() - began)
        sender.join(timeout=1.0)
        if check_keepalive and raw is None:
            if rheaders.get("connection", "").lower() == "close" or not sent["ok"]:
                reply.keepalive = "closed"
            else:
                try:
                    sock.sendall(f"GET /healthz HTTP/1.1\r\nhost: 127.0.0.1:{port}\r\n\r\n".encode())
                    again, _, _ = _read_reply(sock, time.monotonic() + 5.0)
                    reply.keepalive = "ok" if again < 500 else "broken"
                except (OSError, ValueError, IndexError, TimeoutError):
                    reply.keepalive = "broken"
        return reply
    finally:
        try:
            sock.close()
        except OSError:
            pass


def _drop_dac_override() -> None:
    """In the child before exec: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from the bounding
    set (PR_CAPBSET_DROP), so a server run by root is refused writes to a read-only directory."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP) failed")


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie (from /proc)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
    except (OSError, IndexError):
        return False
    return state not in ("Z", "X")


@dataclass
class Service:
    """`python -m placer.cli serve` on 127.0.0.1 with PLACER_* settings, plus a /healthz probe.

    Its output is drained through a pipe into `log_path` (so a file-size limit set on the
    server for the "store full" fault does not silence its logs)."""

    workdir: Path
    settings: dict[str, Any]
    probe_log: Path | None = None
    drop_dac: bool = False  # without CAP_DAC_OVERRIDE: root then obeys file modes ("store unwritable")
    port: int = field(default_factory=free_port)
    proc: subprocess.Popen[bytes] | None = None
    probe: subprocess.Popen[bytes] | None = None
    known_pids: set[int] = field(default_factory=set)

    @property
    def log_path(self) -> Path:
        return self.workdir / f"service-{self.port}.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def launch(self) -> None:
        """Start the process without waiting for it (see `wait_ready`)."""
        env = {**os.environ, **{f"PLACER_{k.upper()}": str(v) for k, v in self.settings.items()}}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        env.pop("PLACER_STRICT", None)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "placer.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=self.workdir,
            preexec_fn=_drop_dac_override if self.drop_dac else None,  # noqa: PLW1509  ctypes + prctl only
            start_new_session=True)
        self.known_pids.add(self.proc.pid)
        threading.Thread(target=self._drain, args=(self.proc,), daemon=True).start()

    def _drain(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdout is not None
        with open(self.log_path, "ab") as out:
            for line in proc.stdout:
                out.write(line)
                out.flush()

    def wait_ready(self, timeout_s: float = 90.0) -> bool:
        """Wait for /healthz to answer (any status); False when the process exited or timed out."""
        assert self.proc is not None
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                return False
            reply = send(self.port, "GET", "/healthz", timeout_s=2.0, check_keepalive=False)
            if reply.status is not None:
                self.known_pids.update(self.worker_pids())
                return True
            time.sleep(0.1)
        return False

    def start(self, timeout_s: float = 90.0) -> Service:
        self.launch()
        if not self.wait_ready(timeout_s):
            self.kill()
            raise RuntimeError(f"service did not start:\n{self.log_tail()}")
        self.start_probe()
        return self

    def start_probe(self) -> None:
        if self.probe_log is None or (self.probe is not None and self.probe.poll() is None):
            return
        self.probe = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.hostile_probe", str(self.port), str(self.probe_log)],
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def stop_probe(self) -> None:
        if self.probe is not None and self.probe.poll() is None:
            self.probe.kill()
            self.probe.wait(timeout=5)

    def worker_pids(self) -> list[int]:
        """The solve workers: children of the server (each leads its own process group)."""
        if self.proc is None or self.proc.poll() is not None:
            return []
        return children(self.proc.pid)

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 20.0) -> int | None:
        """Signal the server; SIGKILL it (and everything it started) if it does not exit in time."""
        self.stop_probe()
        if self.proc is None:
            return None
        self.known_pids.update(self.worker_pids())
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(sig)
                self.proc.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        return self.proc.returncode

    def kill(self) -> None:
        """SIGKILL the server and every process it is known to have started (by pid)."""
        self.stop_probe()
        if self.proc is not None:
            self.known_pids.update(self.worker_pids())
        for pid in sorted(self.known_pids):
            if alive(pid):
                try:
                    os.killpg(pid, signal.SIGKILL)  # each worker (and the server) leads its own group
                except (ProcessLookupError, PermissionError):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
        if self.proc is not None:
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass

    def leftovers(self) -> list[int]:
        """Processes this service started that are still alive."""
        return [pid for pid in sorted(self.known_pids) if alive(pid)]

    def log_tail(self, chars: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""
