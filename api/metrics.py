"""Prometheus metrics in the text exposition format (version 0.0.4), kept per app instance.

A few dozen lines instead of prometheus_client: no process-global registry (each create_app()
owns its metrics, so tests can run several apps in one process) and no extra dependency.
"""
from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

__all__ = ["CONTENT_TYPE", "Counter", "Gauge", "Histogram", "Registry", "ServiceMetrics"]

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

Labels = tuple[str, ...]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names: Sequence[str], values: Sequence[str], extra: str = "") -> str:
    parts = [f'{n}="{_escape(str(v))}"' for n, v in zip(names, values)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _number(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


@dataclass
class Counter:
    """A monotone count per label set."""

    name: str
    help: str
    labelnames: Labels = ()
    _values: dict[Labels, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def inc(self, *labels: str, amount: float = 1.0) -> None:
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {labels}")
        with self._lock:
            self._values[labels] = self._values.get(labels, 0.0) + amount

    def value(self, *labels: str) -> float:
        with self._lock:
            return self._values.get(labels, 0.0)

    def render(self) -> list[str]:
        with self._lock:
            items = sorted(self._values.items())
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} counter"]
        lines += [f"{self.name}{_labels(self.labelnames, k)} {_number(v)}" for k, v in items]
        return lines


@dataclass
class Gauge:
    """A value read when scraped, from a callback (queue depth, running solves)."""

    name: str
    help: str
    read: Callable[[], float]

    def render(self) -> list[str]:
        return [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} gauge",
                f"{self.name} {_number(self.read())}"]


@dataclass
class Histogram:
    """Cumulative buckets, sum and count per label set."""

    name: str
    help: str
    buckets: tuple[float, ...]
    labelnames: Labels = ()
    _counts: dict[Labels, list[int]] = field(default_factory=dict)
    _sums: dict[Labels, float] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def observe(self, value: float, *labels: str) -> None:
        if len(labels) != len(self.labelnames):
            raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {labels}")
        with self._lock:
            counts = self._counts.setdefault(labels, [0] * (len(self.buckets) + 1))
            for i, bound in enumerate(self.buckets):
                if value <= bound:
                    counts[i] += 1
            counts[-1] += 1
            self._sums[labels] = self._sums.get(labels, 0.0) + value

    def render(self) -> list[str]:
        with self._lock:
            items = sorted((k, list(v), self._sums[k]) for k, v in self._counts.items())
        lines = [f"# HELP {self.name} {self.help}", f"# TYPE {self.name} histogram"]
        for labels, counts, total in items:
            for bound, count in zip((*self.buckets, math.inf), counts):
                le = f'le="{_number(bound)}"'
                lines.append(f"{self.name}_bucket{_labels(self.labelnames, labels, le)} {count}")
            lines.append(f"{self.name}_sum{_labels(self.labelnames, labels)} {_number(total)}")
            lines.append(f"{self.name}_count{_labels(self.labelnames, labels)} {counts[-1]}")
        return lines


M = TypeVar("M", Counter, Gauge, Histogram)


@dataclass
class Registry:
    """The metrics of one app, rendered in registration order."""

    metrics: list[Counter | Gauge | Histogram] = field(default_factory=list)

    def add(self, metric: M) -> M:
        self.metrics.append(metric)
        return metric

    def render(self) -> str:
        return "\n".join(line for m in self.metrics for line in m.render()) + "\n"


_LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
_SOLVE_BUCKETS_S = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0, 600.0)


class ServiceMetrics:
    """Everything /metrics shows. Gauges read the job manager through callbacks set by the app."""

    def __init__(self, queue_depth: Callable[[], float], running: Callable[[], float],
                 cluster: Callable[[], Any] | None = None) -> None:
        self.registry = Registry()
        add = self.registry.add
        self.requests = add(Counter("placer_http_requests_total", "HTTP requests answered",
                                    ("method", "route", "status")))
        self.request_seconds = add(Histogram("placer_http_request_duration_seconds",
                                             "time to answer an HTTP request", _LATENCY_BUCKETS_S, ("route",)))
        self.solves = add(Counter("placer_solves_total", "solves finished, by back end and outcome",
                                  ("solver", "status")))
        self.solve_seconds = add(Histogram("placer_solve_duration_seconds",
                                           "wall-clock time of a solve in its worker", _SOLVE_BUCKETS_S,
                                           ("solver",)))
        self.deadline_kills = add(Counter("placer_deadline_kills_total",
                                          "workers killed at their deadline (time limit + grace)"))
        self.worker_starts = add(Counter("placer_worker_starts_total", "solve worker processes started"))
        self.rejected = add(Counter("placer_queue_rejections_total", "solves refused with 503: queue full"))
        add(Gauge("placer_queue_depth", "solves waiting for a worker", queue_depth))
        add(Gauge("placer_solves_running", "solves running in workers", running))
        if cluster is not None:  # an api.executor.ClusterStatus, as the job manager's keeper last saw it
            add(Gauge("placer_cluster_nodes", "live nodes solves run on (1: this machine)", lambda: cluster().nodes))
            add(Gauge("placer_cluster_cpus", "CPUs of those nodes", lambda: cluster().cpus))
            add(Gauge("placer_cluster_cpus_free", "CPUs no task holds (Ray)", lambda: cluster().cpus_free))
            add(Gauge("placer_cluster_tasks_running", "solve tasks of this service running on the cluster",
                      lambda: cluster().tasks_running))

    def render(self) -> str:
        return self.registry.render()
