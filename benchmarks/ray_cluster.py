"""A real Ray cluster on loopback for tests and benchmarks: `ray start --head` plus more nodes
with `ray start --address`, each node on its own loopback address and its own ports, all in a
short temp dir of their own.

Ray turns 127.0.0.1 and "localhost" into the machine's outward address, so the nodes take other
addresses of the loopback range (127.0.0.2, 127.0.0.3, ...): no packet leaves the machine.
Every `ray start` runs in a new session, so a node's daemons (GCS, raylet, agents, workers) share
one process group, and `stop()` kills exactly those groups by id: never `ray stop`, which kills
every Ray process of the machine, other people's included.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from solvers.processes import group_members, kill_group, reap_group

__all__ = ["LocalRayCluster", "RayNode", "ray_cli"]

# Ports of one node: GCS (head only), node manager, object manager, the agents,
# metrics; plus a worker port range. Each node takes a block of free ports.
_PORT_FLAGS = ("--node-manager-port", "--object-manager-port",
               "--dashboard-agent-listen-port", "--dashboard-agent-grpc-port", "--runtime-env-agent-port",
               "--metrics-export-port")
_WORKER_PORTS = 40


def ray_cli() -> str:
    """The `ray` command of this Python environment."""
    found = Path(sys.executable).with_name("ray")
    if found.exists():
        return str(found)
    which = shutil.which("ray")
    if which is None:
        raise FileNotFoundError("the `ray` command is not installed (pip install 'placer[ray]')")
    return which


def _free_ports(host: str, count: int) -> list[int]:
    socks = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((host, 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def _ephemeral_low() -> int:
    """The first port the kernel hands out for `bind(port 0)` (Linux; 32768 elsewhere)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def _free_range(host: str, size: int, taken: list[int]) -> tuple[int, int]:
    """A run of `size` ports that are free now and hold none of `taken`, below the kernel's
    ephemeral range (where `_free_ports` picks the single ports: a run inside it met one of
    them, and `ray start` refused the overlap), from a spot derived from our pid."""
    low, high = 10000, max(10000 + 2 * size, _ephemeral_low())
    first = low + (os.getpid() * 97) % max(1, high - low - size)
    for start in [*range(first, high - size, size), *range(low, first, size)]:
        if any(start <= port < start + size for port in taken):
            continue
        try:
            _check_free(host, range(start, start + size))
        except OSError:
            continue
        return start, start + size - 1
    raise OSError("no free run of worker ports")


def _check_free(host: str, ports: range) -> None:
    for port in ports:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
            s.bind((host, port))


@dataclass
class RayNode:
    """One `ray start` of the cluster."""

    ip: str
    pgid: int
    head: bool
    log_path: Path
    num_cpus: int

    def raylet_pid(self) -> int | None:
        """The PID of this node's raylet (its process group holds exactly one)."""
        return next((pid for pid, name in group_members(self.pgid, zombies=False) if name == "raylet"), None)

    def alive(self) -> bool:
        return bool(group_members(self.pgid, zombies=False))


@dataclass
class LocalRayCluster:
    """Start with `start(num_cpus=[1, 1])` (one entry per node, the head first); `stop()` always.

    `address` is what `ray.init`, `placer solve --ray` and PLACER_RAY_ADDRESS take.
    """

    temp_dir: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="r", dir="/tmp")))
    nodes: list[RayNode] = field(default_factory=list)
    address: str = ""

    def env(self) -> dict[str, str]:
        return {**os.environ, "RAY_USAGE_STATS_ENABLED": "0", "RAY_DISABLE_DOCKER_CPU_WARNING": "1"}

    def start(self, num_cpus: list[int], timeout_s: float = 120.0) -> LocalRayCluster:
        try:
            for index, cpus in enumerate(num_cpus):
                self._start_node(index, cpus, timeout_s)
            self.wait_nodes(len(num_cpus), timeout_s)
        except BaseException:
            self.stop()
            raise
        return self

    def _start_node(self, index: int, cpus: int, timeout_s: float) -> None:
        ip = f"127.0.0.{2 + index}"
        ports = _free_ports(ip, len(_PORT_FLAGS) + 2)  # the last: the head's dashboard port
        low, high = _free_range(ip, _WORKER_PORTS, ports)
        head = index == 0
        log_path = self.temp_dir / f"node{index}.log"
        args = [ray_cli(), "start", "--node-ip-address", ip, "--num-cpus", str(cpus), "--num-gpus", "0",
                "--object-store-memory", str(80 * 1024 * 1024), "--disable-usage-stats",
                "--min-worker-port", str(low), "--max-worker-port", str(high),
                "--resources", json.dumps({f"placer_test_node_{index}": 1})]
        args += [x for flag, port in zip(_PORT_FLAGS, ports[1:-1], strict=True) for x in (flag, str(port))]
        if head:
            self.address = f"{ip}:{ports[0]}"
            args += ["--head", "--port", str(ports[0]), "--temp-dir", str(self.temp_dir),
                     "--include-dashboard", "false", "--dashboard-port", str(ports[-1])]
        else:
            args += ["--address", self.address]
        with open(log_path, "ab") as log:
            proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=self.env(),
                                    start_new_session=True)
        node = RayNode(ip=ip, pgid=proc.pid, head=head, log_path=log_path, num_cpus=cpus)
        self.nodes.append(node)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            code = None
        if code != 0:
            raise RuntimeError(f"ray start of node {index} failed ({code}):\n{log_path.read_text()[-3000:]}")

    def wait_nodes(self, count: int, timeout_s: float) -> None:
        """Wait until the GCS lists `count` live nodes (asked in a child process: no driver here)."""
        script = ("import ray,sys; ray.init(address=sys.argv[1], log_to_driver=False); "
                  "print(sum(1 for n in ray.nodes() if n['Alive']))")
        end = time.monotonic() + timeout_s
        seen = ""
        while time.monotonic() < end:
            done = subprocess.run([sys.executable, "-c", script, self.address], check=False, capture_output=True, text=True,
                                  env=self.env(), timeout=timeout_s)
            seen = done.stdout.strip() or done.stderr[-500:]
            if done.returncode == 0 and seen.isdigit() and int(seen) >= count:
                return
            time.sleep(0.5)
        raise RuntimeError(f"the Ray cluster did not show {count} live nodes within {timeout_s:g} s: {seen}")

    def kill_raylet(self, index: int, timeout_s: float = 10.0) -> int:
        """SIGKILL node `index`'s raylet (a node dying) and wait until its PID is gone; returns it.

        The raylet is reaped here when this process adopted it (a subreaper: pytest after an
        in-process placer service ran): a raylet left a zombie still answers kill(pid, 0), and
        the node's workers, which check on their raylet that way, would run on."""
        node = self.nodes[index]
        pid = node.raylet_pid()
        if pid is None:
            raise RuntimeError(f"node {index} has no raylet")
        os.kill(pid, signal.SIGKILL)
        end = time.monotonic() + timeout_s
        while os.path.exists(f"/proc/{pid}") and time.monotonic() < end:
            reap_group(node.pgid)
            time.sleep(0.05)
        return pid

    def stop(self, timeout_s: float = 20.0) -> list[tuple[int, str]]:
        """Kill every process of every node (by process group), head last; returns the processes
        still found afterwards (empty when the cluster is gone)."""
        for node in reversed(self.nodes):
            kill_group(node.pgid)
        end = time.monotonic() + timeout_s
        left: list[tuple[int, str]] = []
        while time.monotonic() < end:
            for node in self.nodes:
                reap_group(node.pgid)  # a subreaper (a placer service) adopted the daemons of `ray start`
            left = [p for node in self.nodes for p in group_members(node.pgid, zombies=False)]
            if not left:
                break
            time.sleep(0.1)
        shutil.rmtree(self.temp_dir, ignore_errors=True)
        return left
