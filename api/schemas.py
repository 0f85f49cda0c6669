"""Request and response envelopes of the HTTP API.

The documents inside are the library's own models (`placer.schema`: graph, hardware, result;
`placer.engine.PlaceOptions`; `placer.crossover.CrossoverConfig`), so the CLI and the API
read and write the same JSON. `examples` here feed the OpenAPI page at /docs.
"""
from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, model_validator

from placer.engine import PlaceOptions
from placer.schema import GraphSpec, HardwareSpec, Identifier, ResultSpec, ScheduleEntry, TransferEntry

__all__ = [
    "EXAMPLE_GRAPH",
    "EXAMPLE_HARDWARE",
    "ErrorReply",
    "HardwareRef",
    "Health",
    "JobAccepted",
    "JobError",
    "JobProgress",
    "JobView",
    "PlacementOptions",
    "PlacementRequest",
    "PresetSummary",
    "SimulationReply",
    "SimulationRequest",
    "ValidationReply",
    "ValidationRequest",
]

PresetName = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.-]+$",
                                  description="a hardware preset (GET /v1/hardware-graphs lists them)")]


def _hardware_kind(value: Any) -> str:
    return "preset" if isinstance(value, str) else "inline"


HardwareRef = Annotated[
    Annotated[HardwareSpec, Tag("inline")] | Annotated[PresetName, Tag("preset")],
    Discriminator(_hardware_kind),
    Field(description="a placer.hardware/v1 document, or the name of a preset"),
]

EXAMPLE_GRAPH: dict[str, Any] = {
    "format": "placer.graph/v1",
    "name": "diamond",
    "ops": [
        {"id": "a", "time_ms": 1.0, "memory_bytes": 1000000},
        {"id": "b", "time_ms": 4.0},
        {"id": "c", "time_ms": 4.0},
        {"id": "d", "time_ms": 1.0},
    ],
    "edges": [
        {"src": "a", "dst": "b", "bytes": 25000000},
        {"src": "a", "dst": "c", "bytes": 25000000},
        {"src": "b", "dst": "d", "bytes": 25000000},
        {"src": "c", "dst": "d", "bytes": 25000000},
    ],
}

EXAMPLE_HARDWARE: dict[str, Any] = {
    "format": "placer.hardware/v1",
    "name": "two-gpus",
    "devices": [{"id": "gpu0", "memory_bytes": 16000000000}, {"id": "gpu1", "memory_bytes": 16000000000}],
    "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0}],
}


class PlacementOptions(PlaceOptions):
    """`placer.engine.PlaceOptions` plus `async`: answer 202 with a job instead of waiting.

    Strict, as every request model here: "10" is not a number and "yes" not a boolean."""

    model_config = ConfigDict(extra="forbid", populate_by_name=False, strict=True)

    async_: bool = Field(False, alias="async", description="return 202 and a job id at once")
    ray: bool = Field(False, description="spread the solve's independent sub-solves (decomposition components) "
                      "over the service's Ray cluster (PLACER_EXECUTOR=ray); `workers` of them at a time "
                      "(1: as many as the cluster has CPUs for `threads`)")
    ray_address: None = Field(None, description="not settable here: `ray` uses the service's cluster")

    def place_options(self, ray_address: str | None = None) -> PlaceOptions:
        """The engine's options; `ray_address` is the service's cluster when `ray` is asked for."""
        return PlaceOptions.model_validate({**self.model_dump(exclude={"async_", "ray"}), "ray_address": ray_address})


class PlacementRequest(BaseModel):
    """POST /v1/placements."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [
            {"graph": EXAMPLE_GRAPH, "hardware": EXAMPLE_HARDWARE, "options": {"solver": "cpsat", "time_limit_s": 5}},
            {"graph": EXAMPLE_GRAPH, "hardware": "dgx1_v100_quad", "options": {"async": True}},
        ]},
    )

    graph: GraphSpec
    hardware: HardwareRef
    options: PlacementOptions = Field(default_factory=PlacementOptions)


class JobAccepted(BaseModel):
    """202: the solve runs as a job; poll `href`."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"job_id": "3f2a9c0d4b5e4f6a8b7c6d5e4f3a2b1c", "state": "queued", "href": "/v1/jobs/3f2a9c0d4b5e4f6a8b7c6d5e4f3a2b1c"}
    ]})

    job_id: str
    state: Literal["queued"] = "queued"
    href: str


class JobProgress(BaseModel):
    elapsed_s: float | None = None
    phase: str | None = Field(None, description="the solve's current phase (placer.progress.PHASES); "
                              "elapsed_s moves at least every 2 s while it runs")
    incumbent_ms: float | None = Field(None, description="makespan of the best placement so far")
    bound_ms: float | None = Field(None, description="best proven lower bound so far")
    message: str | None = None


class JobError(BaseModel):
    code: str | None = Field(None, description="why the job failed or was cancelled: `no_solution`, "
                             "`worker_failed`, `deadline_exceeded`, `store_unavailable`, `interrupted`, "
                             "`cancelled`, `abandoned`, or an input error's code")
    detail: str | None = None
    type: str | None = None
    input: bool | None = None


class JobWorker(BaseModel):
    """Where a job's solve runs."""

    executor: Literal["local", "ray"] = Field(description="`local` worker process, or `ray` task")
    node_id: str | None = Field(None, description="the Ray node's id (null for a local worker)")
    host: str | None = Field(None, description="the node's address (Ray), or this machine's name (local)")
    hostname: str | None = Field(None, description="the node's host name (Ray)")
    pid: int | None = Field(None, description="the solve's worker process on that host")


class JobView(BaseModel):
    """GET/DELETE /v1/jobs/{id}: a job's state, progress and, once finished, its result."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "id": "3f2a9c0d4b5e4f6a8b7c6d5e4f3a2b1c", "kind": "placement", "state": "running",
        "created_at": 1732260000.0, "started_at": 1732260000.1, "finished_at": None, "interruptions": 0,
        "worker": {"executor": "ray", "node_id": "e9f617a1c0ffee", "host": "10.0.0.12", "hostname": "node-12",
                   "pid": 5686},
        "request": {"solver": "cpsat", "time_limit_s": 60.0, "graph": "inception", "ops": 400, "edges": 520,
                    "hardware": "dgx1_v100", "devices": 8, "deterministic": False},
        "progress": {"elapsed_s": 12.5, "incumbent_ms": 41.2, "bound_ms": 38.9, "message": "cpsat incumbent"},
        "result": None, "error": None,
    }]})

    id: str
    kind: str
    state: Literal["queued", "running", "succeeded", "failed", "cancelled", "interrupted"] = Field(
        description="`succeeded`: `result` holds a placement (`optimal`, or `feasible` when stopped at the "
        "deadline) or a proof of `infeasible`. `failed`: no usable answer, `error.code` says why: "
        "`no_solution` (stopped before any placement was found; `result` holds the bound and reason), "
        "`worker_failed` (the worker died; `result` holds the best placement it had found, if any), "
        "`store_unavailable`, `interrupted`, or the input error. `cancelled`: by DELETE or "
        "`abandoned` (queued and not polled for PLACER_JOB_ABANDON_S)")
    created_at: float
    started_at: float | None = None
    finished_at: float | None = None
    interruptions: int = Field(0, description="how often a restart of the service, or the loss of the cluster "
                               "node running it, interrupted this job (it is then run again)")
    worker: JobWorker | None = Field(None, description="where the job runs or ran (null while queued)")
    request: dict[str, Any] = Field(description="what was asked: solver, time limit, sizes, deterministic")
    progress: JobProgress | None = None
    result: ResultSpec | None = Field(None, description="placer.result/v1 once finished (or the best "
                                      "placement found before a cancel)")
    error: JobError | None = None


class SimulationRequest(BaseModel):
    """POST /v1/simulations: replay a placement, given as a map or as a result document."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [
            {"graph": EXAMPLE_GRAPH, "hardware": EXAMPLE_HARDWARE,
             "placement": {"a": "gpu0", "b": "gpu0", "c": "gpu1", "d": "gpu0"}, "contention": True},
        ]},
    )

    graph: GraphSpec
    hardware: HardwareRef
    placement: dict[Identifier, Identifier] | None = Field(None, description="op id -> device id")
    order: dict[Identifier, list[Identifier]] | None = Field(None, description="device id -> its ops in run order "
                                               "(default: first ready, first run)")
    result: ResultSpec | None = Field(None, description="a placer.result/v1 document instead of placement: "
                                      "its placement and per-device order are replayed")
    contention: bool = Field(False, description="one transfer at a time per link direction")

    @model_validator(mode="after")
    def _one_source(self) -> SimulationRequest:
        if (self.placement is None) == (self.result is None):
            raise ValueError("give exactly one of placement or result")
        if self.order is not None and self.result is not None:
            raise ValueError("order: the result's schedule already gives the order; drop one of them")
        return self


class SimulationReply(BaseModel):
    """What the event-driven replay measured."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "makespan_ms": 7.0, "contention": True, "policy": "fifo",
        "device_busy_ms": {"gpu0": 6.0, "gpu1": 4.0}, "device_utilisation": {"gpu0": 0.857, "gpu1": 0.571},
        "link_bytes": {"gpu0->gpu1": 25000000, "gpu1->gpu0": 25000000},
        "link_busy_ms": {"gpu0->gpu1": 1.005, "gpu1->gpu0": 1.005},
        "schedule": [{"op": "a", "device": "gpu0", "start_ms": 0.0, "end_ms": 1.0}],
        "transfers": [{"src": "a", "dst": "c", "bytes": 25000000, "route": ["gpu0", "gpu1"],
                       "start_ms": 1.0, "end_ms": 2.005}],
    }]})

    makespan_ms: float
    contention: bool
    policy: Literal["fifo", "order"]
    device_busy_ms: dict[str, float]
    device_utilisation: dict[str, float]
    link_bytes: dict[str, int]
    link_busy_ms: dict[str, float]
    schedule: list[ScheduleEntry]
    transfers: list[TransferEntry]


class ValidationRequest(BaseModel):
    """POST /v1/validations: check a result document against its graph and hardware."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{
            "graph": {"ops": [{"id": "a", "time_ms": 1.0}, {"id": "b", "time_ms": 2.0}],
                      "edges": [{"src": "a", "dst": "b", "bytes": 0}]},
            "hardware": EXAMPLE_HARDWARE,
            "result": {"format": "placer.result/v1", "status": "feasible", "solver": "manual", "makespan_ms": 3.0,
                       "placement": {"a": "gpu0", "b": "gpu0"},
                       "schedule": [{"op": "a", "device": "gpu0", "start_ms": 0.0, "end_ms": 1.0},
                                    {"op": "b", "device": "gpu0", "start_ms": 1.0, "end_ms": 3.0}]},
        }]},
    )

    graph: GraphSpec
    hardware: HardwareRef
    result: ResultSpec


class ValidationReply(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [
        {"valid": False, "status": "feasible",
         "violations": ["ops 'b' and 'c' overlap on 'gpu0'", "makespan_ms 5.0 but the latest op ends at 9.0"]}
    ]})

    valid: bool = Field(description="true when the result breaks no rule")
    status: str = Field(description="the result's status (only optimal/feasible results are checked)")
    violations: list[str] = Field(description="every rule the result breaks, one sentence each")


class PresetSummary(BaseModel):
    name: str
    description: str
    devices: int
    kinds: list[str]
    switches: int
    links: int


class ClusterView(BaseModel):
    executor: Literal["local", "ray"]
    address: str | None = Field(None, description="the Ray cluster's address (PLACER_RAY_ADDRESS), or this host")
    nodes: int = Field(description="live nodes")
    cpus: float = Field(description="CPUs of the live nodes")
    cpus_free: float = Field(description="CPUs no task holds now (Ray); equal to cpus for local")
    tasks_running: int = Field(description="solves of this service running now")


class Health(BaseModel):
    model_config = ConfigDict(json_schema_extra={"examples": [{
        "status": "ok", "problems": [], "version": "0.1.0", "solvers": {"cpsat": True, "cbc": True, "highs": True},
        "workers": 2, "workers_alive": 2, "running": 0, "queue_depth": 0, "queue_size": 16,
        "cluster": {"executor": "local", "address": "build-7", "nodes": 1, "cpus": 2.0, "cpus_free": 2.0,
                    "tasks_running": 0},
    }]})

    status: Literal["ok", "degraded", "failing"] = Field(description="`ok`; `degraded` (200) while no solve "
                                                         "worker is up; `failing` (503) while `problems` is not empty")
    problems: list[str] = Field(default_factory=list, description="what keeps the service from working "
                                "right now (job store unwritable, deleted or replaced; a stopped solve slot)")
    version: str
    solvers: dict[str, bool] = Field(description="exact back ends usable here (heuristics always are)")
    workers: int
    workers_alive: int
    running: int
    queue_depth: int
    queue_size: int
    cluster: ClusterView = Field(description="where solves run: this machine (`local`) or a Ray cluster")


class ErrorReply(BaseModel):
    """Every 4xx/5xx answer."""

    model_config = ConfigDict(json_schema_extra={"examples": [
        {"detail": "graph.edges[1] (edge b -> zz): dst names unknown op 'zz'", "code": "invalid_request"}
    ]})

    detail: str
    code: str
    errors: list[dict[str, Any]] | None = None
