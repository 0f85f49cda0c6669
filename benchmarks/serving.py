"""A real `placer serve` for the benchmarks that measure the service over HTTP."""
from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["free_port", "service"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def service(workdir: Path, env: Mapping[str, str] | None = None, cwd: Path | None = None,
            **settings: Any) -> Iterator[str]:
    """`placer serve` on a free loopback port with one worker (settings: `PLACER_<NAME>`,
    the job store in `workdir`), its log in `workdir`; yields its base URL and stops it with
    SIGTERM (SIGKILL after 30 s). `env` replaces the environment (another checkout's
    PYTHONPATH); `cwd` is where it runs (default `workdir`)."""
    import httpx

    port = free_port()
    settings = {"db_path": workdir / f"jobs-{port}.sqlite3", "workers": 1, **settings}
    full_env = dict(os.environ if env is None else env) | {f"PLACER_{k.upper()}": str(v) for k, v in settings.items()}
    log = open(workdir / f"service-{port}.log", "wb")  # noqa: SIM115 (closed below)
    proc = subprocess.Popen([sys.executable, "-m", "placer.cli", "serve", "--host", "127.0.0.1", "--port", str(port)],
                            env=full_env, stdout=log, stderr=subprocess.STDOUT, cwd=cwd or workdir)
    url = f"http://127.0.0.1:{port}"
    try:
        end = time.monotonic() + 120
        while time.monotonic() < end:
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        else:
            raise RuntimeError(f"placer serve did not start: see {log.name}")
        yield url
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()
