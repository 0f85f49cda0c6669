"""A small typed client of `placer serve` (the HTTP API of DESIGN.md), for scripts and notebooks.

    from placer.client import PlacerClient

    client = PlacerClient("http://127.0.0.1:8000", api_key=None)
    result = client.place(graph, "dgx1_v100", {"solver": "cpsat", "time_limit_s": 10})
    print(result.status, result.makespan_ms)

Answers are pydantic models: the library's own where they exist (`ResultSpec`, `GraphSpec`,
`HardwareSpec`), the small reply models below otherwise. Every failure raises from the
project's one error tree: `placer.errors.ServiceInputError` (an `InputError`) when the service
refuses the input (400, 404 unknown preset/model, 413, 415, 422), `ServiceCallError` otherwise
(401, 404 unknown job, 409, 503 queue full, 5xx, unreachable, a wait that ran out), each with
the service's `status`, `code` and `detail`.

It uses the standard library's urllib, so `pip install placer` needs no HTTP package: the client
makes one JSON request at a time and needs no connection pool, streaming or async.
"""
from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from placer.errors import ServiceCallError, ServiceInputError
from placer.schema import GraphSpec, HardwareSpec, ResultSpec, ScheduleEntry, TransferEntry

__all__ = [
    "FINISHED_STATES",
    "CrossoverResult",
    "Health",
    "Job",
    "JobProgress",
    "PlacerClient",
    "SimulationResult",
    "ValidationResult",
]

FINISHED_STATES = frozenset({"succeeded", "failed", "cancelled"})
_INPUT_STATUSES = frozenset({400, 413, 415, 422})
_INPUT_CODES = frozenset({"unknown_preset", "unknown_model", "invalid_input", "invalid_graph", "invalid_hardware",
                          "invalid_request", "limit_exceeded", "contradictory_input"})

Document = Mapping[str, Any] | BaseModel


class _Reply(BaseModel):
    """A reply model: fields a newer service adds are kept, not refused."""

    model_config = ConfigDict(extra="allow")


class JobProgress(_Reply):
    elapsed_s: float | None = None
    phase: str | None = None
    incumbent_ms: float | None = None
    bound_ms: float | None = None
    message: str | None = None


class JobError(_Reply):
    code: str | None = None
    detail: str | None = None
    type: str | None = None
    input: bool | None = None


class Job(_Reply):
    """GET /v1/jobs/{id}."""

    id: str
    kind: str
    state: str
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    interruptions: int = 0
    worker: dict[str, Any] | None = None  # where it runs or ran: executor, node_id, host, pid
    request: dict[str, Any] = Field(default_factory=dict)
    progress: JobProgress | None = None
    result: ResultSpec | None = None
    error: JobError | None = None

    @property
    def finished(self) -> bool:
        return self.state in FINISHED_STATES


class SimulationResult(_Reply):
    """POST /v1/simulations."""

    makespan_ms: float
    contention: bool
    policy: str
    device_busy_ms: dict[str, float]
    device_utilisation: dict[str, float]
    link_bytes: dict[str, int]
    link_busy_ms: dict[str, float]
    schedule: list[ScheduleEntry]
    transfers: list[TransferEntry]


class ValidationResult(_Reply):
    """POST /v1/validations."""

    valid: bool
    status: str
    violations: list[str]


class Health(_Reply):
    """GET /healthz."""

    status: str
    version: str
    solvers: dict[str, bool] = Field(default_factory=dict)
    cluster: dict[str, Any] = Field(default_factory=dict)  # executor, nodes, cpus, cpus_free, tasks_running


class CrossoverOption(_Reply):
    """N-way data parallelism of M-way model-parallel workers (M = 1: DP alone)."""

    n: int
    m: int
    speedup: float | None = None
    epochs: float | None = None
    scaling_efficiency: float | None = None
    mp_speedup: float | None = None
    threshold: float | None = None
    beats_dp: bool | None = None
    energy: dict[str, float | None] = Field(default_factory=dict)


class CrossoverRow(_Reply):
    """Everything about one total device count."""

    devices: int
    dp_only: CrossoverOption
    hybrids: list[CrossoverOption]
    thresholds: dict[str, float | None] = Field(default_factory=dict)
    best_hybrid: CrossoverOption | None = None
    hybrid_gain: float | None = None
    best: CrossoverOption


class CrossoverResult(_Reply):
    """POST /v1/crossover: placer.crossover-result/v1."""

    format: str
    name: str
    epochs_1: float | None = None
    mp_speedup: dict[str, dict[str, Any]]
    rows: list[CrossoverRow]
    crossover_devices: int | None = None
    best_dp: dict[str, Any]
    best_hybrid: dict[str, Any] | None = None
    best_hybrid_gain_over_best_dp: float | None = None
    advice: dict[str, dict[str, Any]] = Field(default_factory=dict)


def _doc(value: Document | str) -> Any:
    """A request document as JSON data (a preset name stays a string)."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json", exclude_none=True, by_alias=True)
    return value if isinstance(value, str) else dict(value)


def _error(status: int | None, body: Any, fallback: str) -> ServiceCallError:
    """The error-tree exception for a failed answer `{"detail", "code"}` (or anything else)."""
    body = body if isinstance(body, dict) else {}
    detail = str(body.get("detail") or fallback)
    code = str(body.get("code") or ("unreachable" if status is None else "http_error"))
    cls = ServiceInputError if status in _INPUT_STATUSES or code in _INPUT_CODES else ServiceCallError
    return cls(detail, status=status, code=code, body=body)


class PlacerClient:
    """One placer service at `base_url`; `api_key` is sent as `Authorization: Bearer <key>`;
    `timeout_s` bounds each HTTP request (a synchronous solve waits up to its time limit, so
    keep it above the longest one you ask for)."""

    def __init__(self, base_url: str, api_key: str | None = None, timeout_s: float = 120.0):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout_s = timeout_s

    # ------------------------------------------------------------------ transport

    def _call(self, method: str, path: str, body: Any = None, query: Mapping[str, Any] | None = None
              ) -> tuple[int, Any]:
        url = self.base_url + path + (f"?{urllib.parse.urlencode(query)}" if query else "")
        data = json.dumps(body, allow_nan=False).encode() if body is not None else None
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.api_key is not None:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                return reply.status, json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                answer = json.loads(raw)
            except ValueError:
                answer = {"detail": raw.decode(errors="replace")[:500] or exc.reason}
            raise _error(exc.code, answer, f"HTTP {exc.code} from {method} {path}") from None
        except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
            reason = getattr(exc, "reason", exc)
            raise _error(None, {}, f"{method} {url}: the service could not be reached ({reason})") from None

    # ------------------------------------------------------------------ placements and jobs

    def place(self, graph: Document, hardware: Document | str, options: Document | None = None,
              poll_s: float = 0.5, on_progress: Callable[[Job], None] | None = None) -> ResultSpec:
        """Solve and return the result (`infeasible` and `no_solution` are results too). When the
        service runs the solve as a job (a big graph or a long time limit) this waits for it."""
        status, answer = self._call("POST", "/v1/placements", self._placement(graph, hardware, options, False))
        if status == 202:
            return self._result_of(self.wait(answer["job_id"], poll_s=poll_s, on_progress=on_progress))
        return ResultSpec.model_validate(answer)

    def submit(self, graph: Document, hardware: Document | str, options: Document | None = None) -> str:
        """Start a solve as a job; returns its id (poll it, wait for it, cancel it)."""
        _, answer = self._call("POST", "/v1/placements", self._placement(graph, hardware, options, True))
        return str(answer["job_id"])

    def poll(self, job_id: str) -> Job:
        """The job's state, progress (phase, elapsed time, incumbent, bound) and, once finished, result."""
        return Job.model_validate(self._call("GET", f"/v1/jobs/{urllib.parse.quote(job_id)}")[1])

    def wait(self, job_id: str, timeout_s: float | None = None, poll_s: float = 0.5,
             on_progress: Callable[[Job], None] | None = None) -> Job:
        """Poll until the job has finished (succeeded, failed or cancelled); `on_progress` sees every
        poll. ServiceCallError (code `wait_timeout`) after `timeout_s`; the job keeps running."""
        end = None if timeout_s is None else time.monotonic() + timeout_s
        while True:
            job = self.poll(job_id)
            if on_progress is not None:
                on_progress(job)
            if job.finished:
                return job
            if end is not None and time.monotonic() >= end:
                raise ServiceCallError(f"job {job_id} is still {job.state} after {timeout_s} s",
                                       code="wait_timeout")
            time.sleep(poll_s)

    def cancel(self, job_id: str) -> Job:
        """Cancel a queued or running job; its result is the best placement found before, if any."""
        return Job.model_validate(self._call("DELETE", f"/v1/jobs/{urllib.parse.quote(job_id)}")[1])

    def result(self, job_id: str, timeout_s: float | None = None, poll_s: float = 0.5) -> ResultSpec:
        """Wait for a job and return its result (`no_solution` is one, though the job is `failed`
        with that code); a job that ended without a result raises its error."""
        return self._result_of(self.wait(job_id, timeout_s=timeout_s, poll_s=poll_s))

    # ------------------------------------------------------------------ other endpoints

    def simulate(self, graph: Document, hardware: Document | str, placement: Mapping[str, str] | None = None,
                 *, order: Mapping[str, list[str]] | None = None, result: Document | None = None,
                 contention: bool = False) -> SimulationResult:
        """Replay a placement (op -> device map, optionally with a per-device order) or a result."""
        body: dict[str, Any] = {"graph": _doc(graph), "hardware": _doc(hardware), "contention": contention}
        if placement is not None:
            body["placement"] = dict(placement)
        if order is not None:
            body["order"] = {d: list(ops) for d, ops in order.items()}
        if result is not None:
            body["result"] = _doc(result)
        return SimulationResult.model_validate(self._call("POST", "/v1/simulations", body)[1])

    def validate(self, graph: Document, hardware: Document | str, result: Document) -> ValidationResult:
        """Every rule the result breaks (a broken result is an answer, not an error)."""
        body = {"graph": _doc(graph), "hardware": _doc(hardware), "result": _doc(result)}
        return ValidationResult.model_validate(self._call("POST", "/v1/validations", body)[1])

    def crossover(self, config: Document) -> CrossoverResult:
        """The DP x MP crossover calculator (placer.crossover/v1 in)."""
        return CrossoverResult.model_validate(self._call("POST", "/v1/crossover", _doc(config))[1])

    def hardware(self, name: str) -> HardwareSpec:
        """A hardware preset as placer.hardware/v1."""
        return HardwareSpec.model_validate(self._call("GET", f"/v1/hardware-graphs/{urllib.parse.quote(name)}")[1])

    def model(self, name: str, batch: int | None = None) -> GraphSpec:
        """A zoo model's training-step graph."""
        query = {"batch": batch} if batch is not None else None
        return GraphSpec.model_validate(self._call("GET", f"/v1/models/{urllib.parse.quote(name)}", query=query)[1])

    def health(self) -> Health:
        return Health.model_validate(self._call("GET", "/healthz")[1])

    # ------------------------------------------------------------------ helpers

    @staticmethod
    def _placement(graph: Document, hardware: Document | str, options: Document | None, run_async: bool
                   ) -> dict[str, Any]:
        opts = dict(_doc(options)) if options is not None else {}
        if run_async:
            opts["async"] = True
        return {"graph": _doc(graph), "hardware": _doc(hardware), "options": opts}

    @staticmethod
    def _result_of(job: Job) -> ResultSpec:
        """The job's result, as the service answers a synchronous solve: a job `failed` with a
        result (`no_solution`, or the best placement of a worker that died) still has an answer."""
        if job.result is None:
            error = job.error or JobError()
            detail = error.detail or f"job {job.id} ended {job.state} without a result"
            cls = ServiceInputError if error.input else ServiceCallError
            raise cls(detail, code=error.code or f"job_{job.state}", body=error.model_dump())
        return job.result
