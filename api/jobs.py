"""Jobs: a bounded queue in front of a fixed pool of warm worker processes.

Every solve, synchronous or not, is a job here. A job submitted with `persistent=True`
(the 202 kind) is written to the SQLite store and survives restarts: at start the store
re-queues jobs a previous process left running, and at shutdown running jobs are marked
interrupted. Synchronous solves live in memory only: their caller holds the connection.

Threads: one per pool slot (it owns one WorkerProcess and runs one job at a time) and one
janitor that forgets expired results. The asyncio side waits on `Job.future`.
"""
from __future__ import annotations

import copy
import logging
import threading
import time
import uuid
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any

from api.errors import (
    JobConflictError,
    JobNotFoundError,
    QueueFullError,
    ServiceStoppingError,
)
from api.logs import request_id_var
from api.metrics import ServiceMetrics
from api.pool import Outcome, WorkerProcess, WorkerStartError, become_subreaper
from api.settings import Settings
from api.store import JobRecord, JobStore
from placer.schema import ResultSpec

__all__ = ["Job", "JobManager", "final_answer"]

log = logging.getLogger("api.jobs")

_PROGRESS_WRITE_PERIOD_S = 1.0


@dataclass(eq=False)  # identity: a job is found in the queue by `is`, never by comparing documents
class Job:
    """A job while this process holds it (queued or running)."""

    record: JobRecord
    persistent: bool
    deadline_s: float
    cancel: threading.Event = field(default_factory=threading.Event)
    cancel_reason: str = "cancelled"  # or "shutdown"
    future: Future[JobRecord] = field(default_factory=Future)
    request_id: str = field(default_factory=request_id_var.get)  # of the HTTP request that made it
    incumbent: dict[str, Any] | None = None  # latest full validated result from the worker
    bound_ms: float | None = None
    progress_written_at: float = 0.0

    @property
    def solver(self) -> str:
        return str(self.record.summary.get("solver", self.record.kind))

    @property
    def time_limit_s(self) -> float:
        return float(self.record.summary.get("time_limit_s", 0.0))


def final_answer(rec: JobRecord) -> dict[str, Any]:
    """The answer document of a finished job, or raise the error it failed with."""
    from api.errors import rebuild_worker_error

    if rec.state == "succeeded" and rec.result is not None:
        return rec.result
    if rec.error is not None:
        raise rebuild_worker_error(rec.error)
    raise JobConflictError(f"job {rec.id} ended {rec.state} without a result")


class JobManager:
    """Submit, watch and cancel jobs; owns the worker processes and the store."""

    def __init__(self, settings: Settings, metrics: ServiceMetrics | None = None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.store = JobStore(settings.db_path)
        self._cond = threading.Condition()
        self._queue: deque[Job] = deque()
        self._active: dict[str, Job] = {}
        self._busy = 0
        self._stopping = False
        self._started = False
        self._threads: list[threading.Thread] = []
        self._workers: dict[int, WorkerProcess] = {}
        self._janitor_stop = threading.Event()

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Open the store, re-queue what a previous process left, start the pool."""
        become_subreaper()
        self.store.open()
        self.store.purge(time.time() - self.settings.result_ttl_s)
        recovered = self.store.recover(self.settings.max_requeues)
        with self._cond:
            for rec in recovered:
                job = Job(rec, persistent=True, deadline_s=self._deadline_s(rec.kind, rec.summary))
                self._queue.append(job)
                self._active[rec.id] = job
        if recovered:
            log.info("re-queued jobs from the store", extra={"jobs": [r.id for r in recovered]})
        for index in range(self.settings.workers):
            t = threading.Thread(target=self._slot, args=(index,), name=f"solve-slot-{index}", daemon=True)
            t.start()
            self._threads.append(t)
        janitor = threading.Thread(target=self._janitor, name="job-janitor", daemon=True)
        janitor.start()
        self._threads.append(janitor)
        self._started = True

    def stop(self, timeout_s: float = 15.0) -> None:
        """Kill running solves (their persistent jobs become interrupted), keep queued ones."""
        with self._cond:
            self._stopping = True
            for job in self._active.values():
                job.cancel_reason = "shutdown"
                job.cancel.set()
            waiting = list(self._queue)
            self._queue.clear()
            self._cond.notify_all()
        for job in waiting:
            if not job.persistent:
                self._resolve_error(job, ServiceStoppingError("the service is shutting down; try again"))
        self._janitor_stop.set()
        end = time.monotonic() + timeout_s
        for t in self._threads:
            t.join(timeout=max(0.1, end - time.monotonic()))
        self.store.close()

    def wait_ready(self, timeout_s: float) -> bool:
        """Wait until every slot has a warm worker (used at start-up and by tests)."""
        end = time.monotonic() + timeout_s
        while time.monotonic() < end:
            with self._cond:
                if len(self._workers) == self.settings.workers and all(w.alive() for w in self._workers.values()):
                    return True
            time.sleep(0.05)
        return False

    # ------------------------------------------------------------------ the API side

    def submit(self, kind: str, request: dict[str, Any], summary: dict[str, Any], persistent: bool) -> Job:
        """Queue a job; QueueFullError when the queue is full, ServiceStoppingError at shutdown."""
        rec = JobRecord(id=uuid.uuid4().hex, kind=kind, state="queued", request={"kind": kind, **request},
                        summary=summary, created_at=time.time())
        job = Job(rec, persistent=persistent, deadline_s=self._deadline_s(kind, summary))
        with self._cond:
            if self._stopping or not self._started:
                raise ServiceStoppingError("the service is not accepting solves (starting or stopping)")
            idle = self.settings.workers - self._busy
            if len(self._queue) >= self.settings.queue_size + max(0, idle):
                if self.metrics:
                    self.metrics.rejected.inc()
                raise QueueFullError(
                    f"all {self.settings.workers} solve workers are busy and {len(self._queue)} solves are "
                    f"waiting (queue size {self.settings.queue_size}); retry after "
                    f"{self.settings.retry_after_s} s",
                    self.settings.retry_after_s,
                )
            if persistent:
                self.store.insert(rec)
            self._queue.append(job)
            self._active[rec.id] = job
            self._cond.notify()
        return job

    def get(self, job_id: str) -> JobRecord:
        with self._cond:
            job = self._active.get(job_id)
            if job is not None:
                return copy.copy(job.record)  # fields are replaced, never mutated in place
        rec = self.store.get(job_id)
        if rec is None:
            raise JobNotFoundError(f"job {job_id!r} does not exist (or its result expired)")
        return rec

    def cancel(self, job_id: str, wait_s: float = 10.0) -> JobRecord:
        """Cancel a queued or running job (a running one's worker is killed)."""
        with self._cond:
            job = self._active.get(job_id)
            if job is not None and job in self._queue:
                self._queue.remove(job)
                queued = True
            else:
                queued = False
            if job is not None and not queued:
                job.cancel_reason = "cancelled"
                job.cancel.set()
        if job is not None and queued:
            self._finish(job, "cancelled", elapsed_s=0.0, error={"code": "cancelled", "detail": "cancelled "
                                                                  "before it started"})
            return job.future.result()
        if job is not None:
            try:
                return job.future.result(timeout=wait_s)
            except (TimeoutError, ServiceStoppingError):  # still dying, or the service is stopping
                return self.get(job_id)
        rec = self.get(job_id)
        if rec.state == "cancelled":
            return rec
        raise JobConflictError(f"job {job_id} already finished ({rec.state}); there is nothing to cancel")

    def queue_depth(self) -> int:
        with self._cond:
            return len(self._queue)

    def running(self) -> int:
        with self._cond:
            return self._busy

    def workers_alive(self) -> int:
        with self._cond:
            return sum(1 for w in self._workers.values() if w.alive())

    def worker_pids(self) -> list[int]:
        with self._cond:
            return [w.pid for w in self._workers.values() if w.pid is not None]

    # ------------------------------------------------------------------ the pool side

    def _deadline_s(self, kind: str, summary: dict[str, Any]) -> float:
        """Wall-clock seconds a job's worker may run: time limit plus grace, per solve it makes."""
        solves = max(1, int(summary.get("solves", 1)))
        return solves * (float(summary.get("time_limit_s", 0.0)) + self.settings.deadline_grace_s)

    def _take(self) -> Job | None:
        with self._cond:
            while not self._stopping and not self._queue:
                self._cond.wait()
            if self._stopping:
                return None
            job = self._queue.popleft()
            self._busy += 1
            return job

    def _spawn(self, index: int) -> WorkerProcess | None:
        worker = WorkerProcess(self.settings.solve_target)
        try:
            worker.start(self.settings.worker_start_timeout_s)
        except WorkerStartError:
            log.exception("a solve worker failed to start", extra={"slot": index})
            return None
        if self.metrics:
            self.metrics.worker_starts.inc()
        with self._cond:
            self._workers[index] = worker
        return worker

    def _slot(self, index: int) -> None:
        worker = self._spawn(index)
        while True:
            job = self._take()
            if job is None:
                break
            try:
                if worker is None or not worker.alive():
                    worker = self._spawn(index)
                if worker is None:
                    self._finish(job, "failed", 0.0, error={"code": "worker_failed", "type": "WorkerFailedError",
                                                             "detail": "no solve worker could be started"})
                    continue
                self._mark_running(job)
                worker.log_context = {"request_id": job.request_id, "job": job.record.id}
                outcome = worker.run(job.record.request, job.deadline_s,
                                     lambda ev, job=job: self._on_progress(job, ev), job.cancel)
                if outcome.kind not in ("done", "error"):
                    worker = None  # killed or dead: a fresh one is started below
                self._conclude(job, outcome)
            except Exception:
                log.exception("solve slot failed", extra={"job": job.record.id})
                if not job.future.done():
                    self._finish(job, "failed", 0.0, error={"code": "worker_failed", "type": "WorkerFailedError",
                                                             "detail": "internal error while running the job"})
            finally:
                with self._cond:
                    self._busy -= 1
            if worker is None and not self._stopping:
                worker = self._spawn(index)
        if worker is not None:
            worker.stop()
        with self._cond:
            self._workers.pop(index, None)

    def _mark_running(self, job: Job) -> None:
        with self._cond:
            job.record.state = "running"
            job.record.started_at = time.time()
        if job.persistent:
            self.store.update(job.record.id, state="running", started_at=job.record.started_at)

    def _on_progress(self, job: Job, event: dict[str, Any]) -> None:
        progress = {k: event.get(k) for k in ("elapsed_s", "phase", "incumbent_ms", "bound_ms", "message")}
        with self._cond:
            if event.get("result") is not None:
                job.incumbent = event["result"]
            if event.get("bound_ms") is not None:
                job.bound_ms = max(job.bound_ms or 0.0, float(event["bound_ms"]))
            progress["incumbent_ms"] = progress["incumbent_ms"] if progress["incumbent_ms"] is not None else (
                (job.record.progress or {}).get("incumbent_ms"))
            progress["bound_ms"] = job.bound_ms
            job.record.progress = progress
            write = job.persistent and time.monotonic() - job.progress_written_at >= _PROGRESS_WRITE_PERIOD_S
            if write:
                job.progress_written_at = time.monotonic()
        if write:
            self.store.update(job.record.id, progress=progress)

    def _conclude(self, job: Job, outcome: Outcome) -> None:
        kind = job.record.kind
        if outcome.kind == "done":
            self._finish(job, "succeeded", outcome.elapsed_s, result=outcome.result)
        elif outcome.kind == "error":
            assert outcome.error is not None
            error = {k: outcome.error.get(k) for k in ("type", "code", "detail", "input")}
            self._finish(job, "failed", outcome.elapsed_s, error=error)
        elif outcome.kind == "cancelled" and job.cancel_reason == "shutdown":
            self._interrupt(job)
        elif kind == "placement":
            stopped_by = {"deadline": "deadline", "cancelled": "cancel", "crashed": "worker_died"}[outcome.kind]
            if outcome.kind == "deadline" and self.metrics:
                self.metrics.deadline_kills.inc()
            if outcome.kind == "deadline":
                log.warning("solve killed at its deadline", extra={
                    "job": job.record.id, "request_id": job.request_id, "deadline_s": job.deadline_s,
                    "solver": job.solver, "had_incumbent": job.incumbent is not None})
            if outcome.kind == "crashed" and job.incumbent is None:
                self._finish(job, "failed", outcome.elapsed_s, error={
                    "type": "WorkerFailedError", "code": "worker_failed",
                    "detail": f"{outcome.detail} before finding any placement"})
                return
            result = self._stopped_result(job, outcome, stopped_by)
            state = "cancelled" if outcome.kind == "cancelled" else "succeeded"
            self._finish(job, state, outcome.elapsed_s, result=result)
        elif outcome.kind == "cancelled":
            self._finish(job, "cancelled", outcome.elapsed_s, error={"code": "cancelled", "detail": "cancelled"})
        elif outcome.kind == "deadline":
            if self.metrics:
                self.metrics.deadline_kills.inc()
            self._finish(job, "failed", outcome.elapsed_s, error={
                "type": "DeadlineExceededError", "code": "deadline_exceeded",
                "detail": f"{kind} did not finish within its deadline of {job.deadline_s:g} s and was stopped"})
        else:
            self._finish(job, "failed", outcome.elapsed_s, error={
                "type": "WorkerFailedError", "code": "worker_failed", "detail": outcome.detail})

    def _stopped_result(self, job: Job, outcome: Outcome, stopped_by: str) -> dict[str, Any]:
        """The answer of a placement whose worker was killed: the latest incumbent as the engine
        validated it (`feasible`), given the best bound seen since, or `no_solution`."""
        why = {"deadline": f"the deadline ({job.time_limit_s:g} s time limit + "
                           f"{self.settings.deadline_grace_s:g} s grace) passed",
               "cancel": "the job was cancelled",
               "worker_died": outcome.detail}[stopped_by]
        if job.incumbent is None:
            result = ResultSpec(status="no_solution", solver=job.solver, lower_bound_ms=job.bound_ms,
                                reason=f"{why} before any placement was found")
        else:
            result = ResultSpec.model_validate(job.incumbent).with_bound(job.bound_ms).model_copy(
                update={"note": f"{why}; this is the best validated placement found until then"})
        update = {"solve_time_s": outcome.elapsed_s, "stopped_by": stopped_by}
        return result.model_copy(update=update).model_dump(mode="json")

    def _interrupt(self, job: Job) -> None:
        """Shutdown during a job: a persistent one is marked interrupted (re-queued at the next
        start); a synchronous caller gets 503."""
        with self._cond:
            job.record.state = "interrupted"
            self._active.pop(job.record.id, None)
        if job.persistent:
            self.store.update(job.record.id, state="interrupted", progress=job.record.progress)
        self._resolve_error(job, ServiceStoppingError("the service is shutting down; the solve was stopped"))

    def _finish(self, job: Job, state: str, elapsed_s: float, result: dict[str, Any] | None = None,
                error: dict[str, Any] | None = None) -> None:
        log.info("job finished", extra={
            "job": job.record.id, "request_id": job.request_id, "kind": job.record.kind, "state": state,
            "status": (result or {}).get("status"), "solver": job.solver, "elapsed_s": round(elapsed_s, 3)})
        with self._cond:
            rec = job.record
            rec.state, rec.result, rec.error, rec.finished_at = state, result, error, time.time()
            self._active.pop(rec.id, None)
            snapshot = copy.copy(rec)
        if job.persistent:
            self.store.update(rec.id, state=state, result=result, error=error, finished_at=rec.finished_at,
                              progress=rec.progress)
        if self.metrics:
            status = result.get("status", state) if result else state
            self.metrics.solves.inc(job.solver, str(status))
            if elapsed_s > 0:
                self.metrics.solve_seconds.observe(elapsed_s, job.solver)
        if not job.future.done():
            job.future.set_result(snapshot)

    def _resolve_error(self, job: Job, exc: Exception) -> None:
        if not job.future.done():
            job.future.set_exception(exc)

    def _janitor(self) -> None:
        period_s = min(60.0, self.settings.result_ttl_s / 2)
        while not self._janitor_stop.wait(period_s):
            try:
                gone = self.store.purge(time.time() - self.settings.result_ttl_s)
                if gone:
                    log.info("forgot expired jobs", extra={"jobs": gone})
            except Exception:
                log.exception("purging expired jobs failed")
