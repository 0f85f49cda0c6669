"""A real `placer serve` process on a free loopback port, and request bodies for the tests."""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Self

import httpx

from solvers.processes import children, group_members  # noqa: F401  (group_members: for the tests)

ROOT = Path(__file__).resolve().parents[2]

TWO_GPUS: dict[str, Any] = {
    "format": "placer.hardware/v1",
    "name": "two-gpus",
    "devices": [{"id": "gpu0", "memory_bytes": 16_000_000_000}, {"id": "gpu1", "memory_bytes": 16_000_000_000}],
    "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0}],
}

# a -> {b, c} -> d, 25 MB tensors. A transfer costs 25e6 B / 25e9 B/s = 1 ms + 5 us = 1.005 ms.
# Optimum on TWO_GPUS: a, b on one GPU, c, d on the other: c runs 2.005-6.005, b's output
# reaches d at 5 + 1.005 = 6.005, so d runs 6.005-7.005. One device: 1 + 4 + 4 + 1 = 10 ms.
DIAMOND: dict[str, Any] = {
    "format": "placer.graph/v1",
    "name": "diamond",
    "ops": [{"id": "a", "time_ms": 1.0}, {"id": "b", "time_ms": 4.0}, {"id": "c", "time_ms": 4.0},
            {"id": "d", "time_ms": 1.0}],
    "edges": [{"src": "a", "dst": "b", "bytes": 25_000_000}, {"src": "a", "dst": "c", "bytes": 25_000_000},
              {"src": "b", "dst": "d", "bytes": 25_000_000}, {"src": "c", "dst": "d", "bytes": 25_000_000}],
}
DIAMOND_OPTIMUM_MS = 7.005


def layered_graph(n_ops: int, seed: int = 7, width: int = 6) -> dict[str, Any]:
    """A deterministic layered DAG: hard enough that no exact solver proves it in seconds."""
    rng = random.Random(seed)
    ops = [{"id": f"op{i}", "time_ms": round(rng.uniform(0.5, 5.0), 3)} for i in range(n_ops)]
    edges = []
    for i in range(width, n_ops):
        layer_start = (i // width - 1) * width
        for j in rng.sample(range(layer_start, layer_start + width), 2):
            edges.append({"src": f"op{j}", "dst": f"op{i}", "bytes": rng.randrange(1, 50) * 1_000_000})
    return {"format": "placer.graph/v1", "name": f"layered{n_ops}", "ops": ops, "edges": edges}


def four_gpus() -> dict[str, Any]:
    devs = [f"gpu{i}" for i in range(4)]
    return {"format": "placer.hardware/v1", "name": "four-gpus",
            "devices": [{"id": d, "memory_bytes": 16_000_000_000} for d in devs],
            "links": [{"a": a, "b": b, "bandwidth_gb_per_s": 10.0, "latency_us": 5.0}
                      for i, a in enumerate(devs) for b in devs[i + 1:]]}


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def process_group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


class ServiceProcess:
    """`python -m placer.cli serve` with PLACER_* settings, on 127.0.0.1 and a free port."""

    def __init__(self, workdir: Path, **settings: Any) -> None:
        self.workdir = workdir
        self.port = free_port()
        self.settings = {"db_path": str(workdir / "jobs.sqlite3"), "workers": 2, **settings}
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = workdir / f"service-{self.port}.log"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout_s: float = 60.0) -> ServiceProcess:
        env = {**os.environ, **{f"PLACER_{k.upper()}": str(v) for k, v in self.settings.items()}}
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), env.get("PYTHONPATH", "")) if p)
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "placer.cli", "serve", "--host", "127.0.0.1", "--port", str(self.port)],
                env=env, stdout=log, stderr=subprocess.STDOUT, cwd=self.workdir,
            )
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"service exited with {self.proc.returncode}:\n{self.log()}")
            try:
                if httpx.get(f"{self.base_url}/healthz", timeout=1.0).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop(signal.SIGKILL)
        raise RuntimeError(f"service did not answer /healthz within {timeout_s} s:\n{self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 30.0) -> int | None:
        if self.proc is None or self.proc.poll() is not None:
            return self.proc.returncode if self.proc else None
        self.proc.send_signal(sig)
        try:
            return self.proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def worker_pids(self) -> list[int]:
        assert self.proc is not None
        return children(self.proc.pid)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-5000:] if self.log_path.exists() else ""

    def client(self, **kwargs: Any) -> httpx.Client:
        return httpx.Client(base_url=self.base_url, timeout=kwargs.pop("timeout", 60.0), **kwargs)


def wait_for_job(client: httpx.Client, job_id: str, timeout_s: float = 60.0,
                 until: tuple[str, ...] = ("succeeded", "failed", "cancelled")) -> dict[str, Any]:
    end = time.monotonic() + timeout_s
    while True:
        reply = client.get(f"/v1/jobs/{job_id}")
        assert reply.status_code == 200, reply.text
        job = reply.json()
        if job["state"] in until or time.monotonic() > end:
            return job
        time.sleep(0.1)
