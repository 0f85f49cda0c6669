"""Service settings, read from the environment (prefix PLACER_) by pydantic-settings."""
from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings"]


class Settings(BaseSettings):
    """Every knob of the service; `PLACER_<NAME>` in the environment sets `<name>`."""

    model_config = SettingsConfigDict(env_prefix="PLACER_", extra="ignore", frozen=True)

    host: str = Field("127.0.0.1", description="address `placer serve` binds")
    port: int = Field(8000, ge=0, le=65535, description="port `placer serve` binds (0: any free port)")
    workers: int = Field(2, ge=1, le=1024, description="solves that run at once: worker processes here "
                         "(executor local), or solve tasks on the cluster (executor ray)")
    executor: Literal["local", "ray"] = Field("local", description="where solves run: `local` worker processes, "
                                              "or `ray` tasks on the cluster at ray_address (needs placer[ray])")
    ray_address: str = Field("auto", description="the Ray cluster solves run on with executor ray: `auto` (the "
                             "cluster this machine is part of) or HOST:PORT of its head")
    queue_size: int = Field(16, ge=0, description="solves that may wait for a worker; beyond: 503")
    retry_after_s: int = Field(5, ge=1, description="Retry-After sent with a 503 when the queue is full")

    db_path: Path = Field(Path("placer-jobs.sqlite3"), description="SQLite file holding jobs and results")
    result_ttl_s: float = Field(86400.0, gt=0, description="how long finished jobs and results are kept")
    max_requeues: int = Field(3, ge=0, description="restarts a job survives before it is failed")
    store_check_period_s: float = Field(1.0, gt=0, description="how often the job store file is checked "
                                        "(deleted, replaced) while it is healthy")
    store_class: str = Field("api.store:JobStore", description="module:Class of the job store (tests swap "
                             "in one that injects faults)")
    job_queue_size: int = Field(64, ge=0, description="jobs (202) that may wait for a worker; beyond: 503. "
                                "Apart from queue_size, so jobs never take a synchronous caller's place")
    job_workers: int = Field(0, ge=0, description="workers jobs (202) may occupy at once; 0: all but one "
                             "(at least one), so a synchronous solve always finds a worker soon")
    job_abandon_s: float = Field(3600.0, ge=0, description="a queued job nobody polled for this long is "
                                 "cancelled (code `abandoned`); 0: never")

    max_body_bytes: int = Field(10_000_000, ge=1024, description="larger request bodies get 413")
    max_json_depth: int = Field(32, ge=4, description="deeper JSON nesting gets 400")
    max_ops: int = Field(5000, ge=1, description="ops per graph")
    max_edges: int = Field(50000, ge=0, description="edges per graph")
    max_devices: int = Field(256, ge=1, description="devices per hardware graph")
    max_time_limit_s: float = Field(600.0, gt=0, description="largest options.time_limit_s accepted")
    max_threads: int = Field(4, ge=1, description="largest options.threads accepted")
    max_crossover_points: int = Field(
        2048, ge=1, description="entries of crossover `devices` and of each of its tables (epochs, efficiency, SU^M)")
    compute_threads: int = Field(2, ge=1, description="requests validated, simulated or computed at once, in "
                                 "threads off the event loop (solves run in the worker processes)")
    deadline_grace_s: float = Field(5.0, ge=0, description="a worker is killed at time_limit_s + this")
    worker_start_timeout_s: float = Field(120.0, gt=0, description="time a new worker may take to start")

    async_ops_threshold: int = Field(300, ge=1, description="graphs with more ops always run as jobs (202)")
    sync_max_time_limit_s: float = Field(
        60.0, gt=0, description="placements with a longer time limit always run as jobs (202)"
    )

    api_key: SecretStr | None = Field(None, description="when set, every endpoint but /healthz needs "
                                      "`Authorization: Bearer <key>`")
    auth_failure_burst: int = Field(10, ge=1, description="wrong or missing API keys a client address may send "
                                    "before it gets 429 (a token bucket per address)")
    auth_failure_refill_s: float = Field(6.0, gt=0, description="one more attempt comes back every this many "
                                         "seconds")
    allowed_hosts: str = Field("", description="comma-separated Host header names accepted besides the loopback "
                               "names and the bound host (421 for others: DNS rebinding); `*` accepts any Host")
    log_level: str = Field("info", description="log level of the JSON logs")
    solve_target: str = Field(
        "api.solve:run_request", description="module:function a worker calls per request (tests swap it)"
    )
