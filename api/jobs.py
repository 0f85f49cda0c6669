"""Jobs: two bounded queues in front of a fixed pool of warm worker processes.

Every solve, synchronous or not, is a job here. A job submitted with `persistent=True`
(the 202 kind) is written to the SQLite store and survives restarts: at start the store
re-queues jobs a previous process left running, and at shutdown running jobs are marked
interrupted. Synchronous solves live in memory only: their caller holds the connection.

Fairness: synchronous solves and jobs wait in separate queues (`queue_size`, `job_queue_size`),
a free worker takes the oldest synchronous solve first, jobs run on at most `job_workers`
workers, and a queued job nobody polled for `job_abandon_s` is cancelled. A synchronous
caller that disconnects has its solve cancelled (`api.routes.placements.wait_for_job`).

The store may fail under us (disk full, file deleted). A failed write never stops a thread:
the job's latest record is held in memory (`_unsaved`, served by `get`) and the keeper thread
writes it again with a growing pause until the store takes it; meanwhile new jobs are refused
with 503 `store_unavailable` and `problems()` (so /healthz) names the cause.

Threads: one per pool slot (it owns one worker and runs one job at a time) and one keeper
(store checks and retries, abandoned jobs, expired results, slot supervision, a fresh look at
the cluster). The asyncio side waits on `Job.future`. Where a slot's worker runs its solves is
the executor's business (api.executor: local worker processes, or Ray tasks on a cluster); a
solve whose cluster node died comes back as Outcome "lost" and is run again, counted in the
job's `interruptions`.
"""
from __future__ import annotations

import copy
import importlib
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
    StoreUnavailableError,
)
from api.executor import ClusterStatus, SolveWorker, make_executor
from api.logs import request_id_var
from api.metrics import ServiceMetrics
from api.pool import Outcome, WorkerStartError, become_subreaper
from api.settings import Settings
from api.store import FINAL_STATES, JobRecord, JobStore
from placer.budget import DETERMINISTIC_STRETCH
from placer.schema import ResultSpec

__all__ = ["Job", "JobManager", "final_answer"]

log = logging.getLogger("api.jobs")

_PROGRESS_WRITE_PERIOD_S = 1.0
_RETRY_MIN_S = 0.25  # first pause after a failed store write or a slot error; doubles up to
_RETRY_MAX_S = 5.0   # this, so the store is written again within 5 s of space coming back


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
    polled_at: float = field(default_factory=time.monotonic)  # last GET: jobs nobody polls are abandoned
    version: int = 0  # bumped on every change the store must see (the keeper writes the latest)

    @property
    def solver(self) -> str:
        return str(self.record.summary.get("solver", self.record.kind))

    @property
    def time_limit_s(self) -> float:
        return float(self.record.summary.get("time_limit_s", 0.0))


def final_answer(rec: JobRecord) -> dict[str, Any]:
    """The answer document of a finished job, or raise the error it failed with. A synchronous
    caller gets the result even of a failed job when there is one (`no_solution`, or the best
    placement a worker found before it died): the document itself says how it ended."""
    from api.errors import rebuild_worker_error

    if rec.state in ("succeeded", "failed") and rec.result is not None:
        return rec.result
    if rec.error is not None:
        raise rebuild_worker_error(rec.error)
    raise JobConflictError(f"job {rec.id} ended {rec.state} without a result")


def _load_store_class(spec: str) -> type[JobStore]:
    module, _, name = spec.partition(":")
    cls = getattr(importlib.import_module(module), name)
    if not (isinstance(cls, type) and issubclass(cls, JobStore)):
        raise TypeError(f"PLACER_STORE_CLASS {spec!r} is not a JobStore")
    return cls


def _answer_state(result: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    """State and error of a job that ended with `result`: `no_solution` is an answer, not a
    success, so the job is `failed` with code `no_solution` (the result stays attached)."""
    if result.get("status") != "no_solution":
        return "succeeded", None
    reason = result.get("reason") or "the solver stopped before it found any placement"
    return "failed", {"type": "NoSolution", "code": "no_solution", "detail": str(reason)}


class JobManager:
    """Submit, watch and cancel jobs; owns the worker processes and the store."""

    def __init__(self, settings: Settings, metrics: ServiceMetrics | None = None) -> None:
        self.settings = settings
        self.metrics = metrics
        self.store = _load_store_class(settings.store_class)(settings.db_path)
        self._cond = threading.Condition()  # an RLock inside: helpers may take it again
        self._sync_queue: deque[Job] = deque()
        self._job_queue: deque[Job] = deque()
        self._active: dict[str, Job] = {}
        self._unsaved: dict[str, Job] = {}  # persistent jobs whose latest state the store lacks
        self._store_error: str | None = None
        self._store_error_since = 0.0
        self._busy = 0
        self._busy_jobs = 0
        self._job_workers = min(settings.workers, settings.job_workers or max(1, settings.workers - 1))
        self._stopping = False
        self._started = False
        self._slots: dict[int, threading.Thread] = {}
        self._keeper_thread: threading.Thread | None = None
        self._workers: dict[int, SolveWorker] = {}
        self._keeper_stop = threading.Event()
        self.executor = make_executor(settings, self.running)

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Open the store, re-queue what a previous process left, start the pool."""
        become_subreaper()
        self.executor.open()
        self.store.open()
        self.store.purge(time.time() - self.settings.result_ttl_s)
        recovered = self.store.recover(self.settings.max_requeues)
        with self._cond:
            for rec in recovered:
                job = Job(rec, persistent=True, deadline_s=self._deadline_s(rec.kind, rec.summary))
                self._job_queue.append(job)
                self._active[rec.id] = job
        if recovered:
            log.info("re-queued jobs from the store", extra={"jobs": [r.id for r in recovered]})
        for index in range(self.settings.workers):
            self._start_slot(index)
        self._keeper_thread = threading.Thread(target=self._keeper, name="job-keeper", daemon=True)
        self._keeper_thread.start()
        self._started = True

    def _start_slot(self, index: int) -> None:
        t = threading.Thread(target=self._slot, args=(index,), name=f"solve-slot-{index}", daemon=True)
        with self._cond:
            self._slots[index] = t
        t.start()

    def stop(self, timeout_s: float = 15.0) -> None:
        """Kill running solves (their persistent jobs become interrupted), keep queued ones."""
        with self._cond:
            self._stopping = True
            for job in self._active.values():
                job.cancel_reason = "shutdown"
                job.cancel.set()
            waiting = [*self._sync_queue, *self._job_queue]
            self._sync_queue.clear()
            self._job_queue.clear()
            self._cond.notify_all()
        for job in waiting:
            if not job.persistent:
                self._resolve_error(job, ServiceStoppingError("the service is shutting down; try again"))
        self._keeper_stop.set()
        end = time.monotonic() + timeout_s
        for t in [*self._slots.values(), self._keeper_thread]:
            if t is not None:
                t.join(timeout=max(0.1, end - time.monotonic()))
        self._last_flush()
        self.store.close()
        self.executor.close()

    def _last_flush(self) -> None:
        """Write what the store still lacks; if it cannot, say loudly which jobs it will show stale
        (running or queued ones are re-run at the next start, finished ones lose their result)."""
        if not self._unsaved:
            return
        try:
            self._flush_unsaved()
        except StoreUnavailableError as exc:
            log.error("the job store could not be written before shutdown; these jobs' latest states are "
                      "lost (the store keeps the last state it took)",
                      extra={"jobs": {j.record.id: j.record.state for j in self._unsaved.values()},
                             "reason": str(exc)})

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
        """Queue a job; QueueFullError when its queue is full, ServiceStoppingError at shutdown,
        StoreUnavailableError when a persistent job cannot be written to the store."""
        rec = JobRecord(id=uuid.uuid4().hex, kind=kind, state="queued", request={"kind": kind, **request},
                        summary=summary, created_at=time.time())
        job = Job(rec, persistent=persistent, deadline_s=self._deadline_s(kind, summary))
        with self._cond:
            if self._stopping or not self._started:
                raise ServiceStoppingError("the service is not accepting solves (starting or stopping)")
            self._check_room(persistent)
            if persistent:
                try:
                    self.store.insert(rec)
                except StoreUnavailableError as exc:
                    if exc.transient:
                        self._store_failed(exc)
                    if self.metrics:
                        self.metrics.rejected.inc()
                    raise StoreUnavailableError(
                        f"jobs cannot be accepted now: {exc}; synchronous solves still run. Retry after "
                        f"{self.settings.retry_after_s} s", self.settings.retry_after_s) from exc
            (self._job_queue if persistent else self._sync_queue).append(job)
            self._active[rec.id] = job
            self._cond.notify()
        return job

    def _check_room(self, persistent: bool) -> None:
        if persistent:
            full = len(self._job_queue) >= self.settings.job_queue_size
            what = (f"{len(self._job_queue)} jobs are waiting (PLACER_JOB_QUEUE_SIZE "
                    f"{self.settings.job_queue_size})")
        else:
            idle = self.settings.workers - self._busy
            full = len(self._sync_queue) >= self.settings.queue_size + max(0, idle)
            what = (f"all {self.settings.workers} solve workers are busy and {len(self._sync_queue)} solves are "
                    f"waiting (queue size {self.settings.queue_size})")
        if full:
            if self.metrics:
                self.metrics.rejected.inc()
            raise QueueFullError(f"{what}; retry after {self.settings.retry_after_s} s", self.settings.retry_after_s)

    def get(self, job_id: str) -> JobRecord:
        with self._cond:
            job = self._active.get(job_id) or self._unsaved.get(job_id)
            if job is not None:
                job.polled_at = time.monotonic()
                return copy.copy(job.record)  # fields are replaced, never mutated in place
        rec = self.store.get(job_id)
        if rec is None:
            raise JobNotFoundError(f"job {job_id!r} does not exist (or its result expired)")
        return rec

    def cancel(self, job_id: str, wait_s: float = 10.0) -> JobRecord:
        """Cancel a queued or running job (a running one's worker is killed)."""
        with self._cond:
            job = self._active.get(job_id)
            if job is not None and job.record.state in FINAL_STATES:
                job = None  # it finished a moment ago and its record is being saved: as a finished job
            queued = job is not None and self._dequeue(job)
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

    def _dequeue(self, job: Job) -> bool:
        """Take `job` out of its queue (lock held); False when it is not waiting."""
        queue = self._job_queue if job.persistent else self._sync_queue
        if job in queue:
            queue.remove(job)
            return True
        return False

    def queue_depth(self) -> int:
        with self._cond:
            return len(self._sync_queue) + len(self._job_queue)

    def running(self) -> int:
        with self._cond:
            return self._busy

    def workers_alive(self) -> int:
        with self._cond:
            return sum(1 for w in self._workers.values() if w.alive())

    def cluster(self) -> ClusterStatus:
        """Where solves run, as the keeper last saw it (/healthz, /metrics)."""
        return self.executor.cluster()

    def worker_pids(self) -> list[int]:
        with self._cond:
            return [w.pid for w in self._workers.values() if w.pid is not None]

    def problems(self) -> list[str]:
        """What keeps the service from doing its job right now, one sentence each (/healthz)."""
        found = []
        with self._cond:
            if self._store_error is not None:
                found.append(f"{self._store_error} (for {time.monotonic() - self._store_error_since:.0f} s; "
                             f"{len(self._unsaved)} job states held in memory and retried; jobs are refused while "
                             f"writes fail)")
            dead = [] if self._stopping else [i for i, t in self._slots.items() if not t.is_alive()]
        file_problem = self.store.file_problem()
        if file_problem is not None and file_problem not in (self._store_error or ""):
            found.append(file_problem)
        cluster_problem = self.executor.cluster().problem
        if cluster_problem is not None:
            found.append(cluster_problem)
        found += [f"solve slot {i} stopped (restarted within {self.settings.store_check_period_s:g} s)"
                  for i in dead]
        return found

    # ------------------------------------------------------------------ the store side

    def _save(self, job: Job, **fields: Any) -> None:
        """Write fields of a persistent job. Never raises: when the store fails, the job's record
        is held in memory and the keeper writes all of it later."""
        if not job.persistent:
            return
        with self._cond:
            job.version += 1
            if job.record.id in self._unsaved:  # an earlier write is pending: the keeper writes the latest
                return
        try:
            self.store.update(job.record.id, **fields)
        except StoreUnavailableError as exc:
            with self._cond:
                self._unsaved[job.record.id] = job
            self._store_failed(exc)

    def _store_failed(self, exc: StoreUnavailableError) -> None:
        with self._cond:
            first = self._store_error is None
            self._store_error = str(exc)
            if first:
                self._store_error_since = time.monotonic()
        if first:
            log.error("job store write failed; job states are held in memory and written again when it can",
                      extra={"reason": str(exc), "db_path": str(self.settings.db_path)})

    def _flush_unsaved(self) -> None:
        """Write every held record; raise StoreUnavailableError at the first one the store refuses
        for a reason that may pass. A record refused for itself (too big) is stored as `failed`."""
        with self._cond:
            held = list(self._unsaved.values())
        for job in held:
            with self._cond:
                snapshot, version = copy.copy(job.record), job.version
            try:
                self.store.upsert(snapshot)
            except StoreUnavailableError as exc:
                if exc.transient or snapshot.finished_at is None:  # a job still running may end storable
                    raise
                self._store_unstorable(job, snapshot, exc)
            with self._cond:
                if job.version == version:
                    self._unsaved.pop(job.record.id, None)

    def _store_unstorable(self, job: Job, snapshot: JobRecord, exc: StoreUnavailableError) -> None:
        """The store refuses this job's record itself: end the job `failed`, saying why."""
        error = {"type": "StoreUnavailableError", "code": "store_unavailable",
                 "detail": f"the job ended {snapshot.state} but its record could not be stored ({exc}); "
                           f"its result is lost"}
        log.error("a job's record could not be stored; the job is failed", extra={"job": snapshot.id,
                                                                                "reason": str(exc)})
        with self._cond:
            rec = job.record
            rec.state, rec.result, rec.error = "failed", None, error
            snapshot = copy.copy(rec)
        self.store.upsert(snapshot)

    def _check_store(self) -> bool:
        """Retry held writes; follow a deleted store file. True when the store is healthy."""
        with self._cond:
            troubled = self._store_error is not None or bool(self._unsaved)
        if not troubled and self.store.file_problem() is None:
            return True
        try:
            self._flush_unsaved()
            self.store.probe()  # re-creates a deleted file; proves writes work again
        except StoreUnavailableError as exc:
            self._store_failed(exc)
            return False
        with self._cond:
            if self._unsaved:  # a write failed meanwhile
                return False
            was, self._store_error = self._store_error, None
        if was is not None:
            log.warning("job store writable again; held job states written", extra={"was": was})
        return True

    # ------------------------------------------------------------------ the keeper

    def _keeper(self) -> None:
        """Store checks and retries, abandoned jobs, expired results, dead slots. Never dies."""
        purge_period_s = min(60.0, self.settings.result_ttl_s / 2)
        next_purge = time.monotonic() + purge_period_s
        backoff_s = _RETRY_MIN_S
        wait_s = self.settings.store_check_period_s
        while not self._keeper_stop.wait(wait_s):
            healthy = False
            try:
                self._supervise_slots()
                self._abandon_unpolled()
                self.executor.refresh()
                healthy = self._check_store()
                if healthy and time.monotonic() >= next_purge:
                    next_purge = time.monotonic() + purge_period_s
                    gone = self.store.purge(time.time() - self.settings.result_ttl_s)
                    if gone:
                        log.info("forgot expired jobs", extra={"jobs": gone})
            except Exception:
                log.exception("job keeper error; it carries on")
            if healthy:
                backoff_s, wait_s = _RETRY_MIN_S, self.settings.store_check_period_s
            else:
                wait_s, backoff_s = backoff_s, min(_RETRY_MAX_S, backoff_s * 2)

    def _supervise_slots(self) -> None:
        with self._cond:
            dead = [] if self._stopping else [i for i, t in self._slots.items() if not t.is_alive()]
        for index in dead:
            log.error("a solve slot stopped; starting it again", extra={"slot": index})
            with self._cond:
                worker = self._workers.pop(index, None)
            if worker is not None:
                worker.stop()
            self._start_slot(index)

    def _abandon_unpolled(self) -> None:
        """Cancel queued jobs nobody polled for `job_abandon_s`: their clients are gone, and
        they would hold queue places and workers for nobody."""
        limit_s = self.settings.job_abandon_s
        if not limit_s:
            return
        now = time.monotonic()
        with self._cond:
            gone = [job for job in self._job_queue if now - job.polled_at > limit_s]
            for job in gone:
                self._job_queue.remove(job)
        for job in gone:
            log.warning("cancelled a queued job nobody polled", extra={"job": job.record.id, "limit_s": limit_s})
            self._finish(job, "cancelled", 0.0, error={
                "code": "abandoned", "detail": f"cancelled before it started: nobody polled it for "
                                               f"{limit_s:g} s (PLACER_JOB_ABANDON_S)"})

    # ------------------------------------------------------------------ the pool side

    def _deadline_s(self, kind: str, summary: dict[str, Any]) -> float:
        """Wall-clock seconds a job's worker may run: time limit plus grace, per solve it makes.
        A deterministic solve counts work, not seconds: killing it at its limit on a busy machine
        would make its answer depend on the load, so it gets DETERMINISTIC_STRETCH limits."""
        solves = max(1, int(summary.get("solves", 1)))
        limit_s = float(summary.get("time_limit_s", 0.0))
        if summary.get("deterministic"):
            limit_s *= DETERMINISTIC_STRETCH
        return solves * (limit_s + self.settings.deadline_grace_s)

    def _take(self) -> Job | None:
        """The next job for a free slot: the oldest synchronous solve first, then the oldest job
        while fewer than `job_workers` jobs run. None when the service stops."""
        with self._cond:
            while not self._stopping:
                if self._sync_queue:
                    job = self._sync_queue.popleft()
                elif self._job_queue and self._busy_jobs < self._job_workers:
                    job = self._job_queue.popleft()
                    self._busy_jobs += 1
                else:
                    self._cond.wait()
                    continue
                self._busy += 1
                return job
            return None

    def _spawn(self, index: int) -> SolveWorker | None:
        worker = self.executor.new_worker(self.settings.solve_target)
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
        """Feed one worker, one job at a time, until the service stops. Never dies of an error:
        it is logged, the job it hit is failed, and the slot carries on after a pause that grows
        with repeated errors (a slot that died would halve capacity for good)."""
        worker: SolveWorker | None = None
        errors = 0
        while not self._stopping:
            job: Job | None = None
            try:
                if worker is None or not worker.alive():
                    worker = self._spawn(index)
                job = self._take()
                if job is None:
                    break
                worker = self._run(index, job, worker)
                errors = 0
            except Exception:
                errors += 1
                log.exception("solve slot error; the slot carries on", extra={
                    "slot": index, "job": job.record.id if job else None})
                if job is not None and not job.future.done():
                    self._fail_quietly(job)
                if worker is not None and not worker.alive():
                    worker = None
                self._keeper_stop.wait(min(_RETRY_MAX_S, _RETRY_MIN_S * 2 ** errors))
        if worker is not None:
            worker.stop()
        with self._cond:
            if self._workers.get(index) is worker:
                self._workers.pop(index, None)

    def _fail_quietly(self, job: Job) -> None:
        try:
            self._finish(job, "failed", 0.0, error={"code": "worker_failed", "type": "WorkerFailedError",
                                                     "detail": "internal error while running the job"})
        except Exception:
            log.exception("could not fail a job after a slot error", extra={"job": job.record.id})
            self._resolve_error(job, RuntimeError("internal error while running the job"))

    def _run(self, index: int, job: Job, worker: SolveWorker | None) -> SolveWorker | None:
        """Run one job on the slot's worker; returns the worker to keep (None: start a new one).
        The slot counts as free again before the job's caller hears the answer: a caller who
        sends the next solve the moment this one returns must find the worker idle."""
        outcome: Outcome | None = None
        try:
            if worker is None or not worker.alive():
                worker = self._spawn(index)
            if worker is not None:
                self._mark_running(job)
                worker.log_context = {"request_id": job.request_id, "job": job.record.id}
                outcome = worker.run(job.record.request, job.deadline_s,
                                     lambda ev, job=job: self._on_progress(job, ev), job.cancel,
                                     on_start=lambda where, job=job: self._on_start(job, where))
        finally:
            with self._cond:
                self._busy -= 1
                if job.persistent:
                    self._busy_jobs -= 1
                self._cond.notify_all()  # a job may now be allowed to run
        if outcome is None:  # no worker could be started (a run that raised never gets here)
            self._finish(job, "failed", 0.0, error={"code": "worker_failed", "type": "WorkerFailedError",
                                                     "detail": "no solve worker could be started"})
            return None
        if outcome.kind not in ("done", "error"):
            worker = None  # killed or dead: a fresh one is started
        self._conclude(job, outcome)
        return worker

    def _mark_running(self, job: Job) -> None:
        with self._cond:
            job.record.state = "running"
            job.record.started_at = time.time()
        self._save(job, state="running", started_at=job.record.started_at)

    def _on_start(self, job: Job, where: dict[str, Any]) -> None:
        """The solve runs now: say where (the job document's `worker`)."""
        with self._cond:
            job.record.worker = dict(where)
        self._save(job, worker=job.record.worker)

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
            self._save(job, progress=progress)

    def _conclude(self, job: Job, outcome: Outcome) -> None:
        kind = job.record.kind
        if outcome.kind == "done":
            result = outcome.result or {}
            state, error = _answer_state(result) if kind == "placement" else ("succeeded", None)
            self._finish(job, state, outcome.elapsed_s, result=outcome.result, error=error)
        elif outcome.kind == "error":
            assert outcome.error is not None
            error = {k: outcome.error.get(k) for k in ("type", "code", "detail", "input")}
            self._finish(job, "failed", outcome.elapsed_s, error=error)
        elif outcome.kind == "cancelled" and job.cancel_reason == "shutdown":
            self._interrupt(job)
        elif outcome.kind == "lost":
            self._run_again(job, outcome)
        elif kind == "placement":
            self._conclude_stopped_placement(job, outcome)
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

    def _conclude_stopped_placement(self, job: Job, outcome: Outcome) -> None:
        """A placement whose worker was killed (deadline, cancel) or died. Deadline: `succeeded`
        with the incumbent, else `failed` `no_solution`. Cancel: `cancelled`. Died: `failed`
        `worker_failed`, the incumbent (if any) kept as the result."""
        stopped_by = {"deadline": "deadline", "cancelled": "cancel", "crashed": "worker_died"}[outcome.kind]
        if outcome.kind == "deadline":
            if self.metrics:
                self.metrics.deadline_kills.inc()
            log.warning("solve killed at its deadline", extra={
                "job": job.record.id, "request_id": job.request_id, "deadline_s": job.deadline_s,
                "solver": job.solver, "had_incumbent": job.incumbent is not None})
        if outcome.kind == "crashed":
            found = "; the best placement it had found is the result" if job.incumbent else \
                " before finding any placement"
            self._finish(job, "failed", outcome.elapsed_s,
                         result=self._stopped_result(job, outcome, stopped_by) if job.incumbent else None,
                         error={"type": "WorkerFailedError", "code": "worker_failed",
                                "detail": f"{outcome.detail}{found}"})
            return
        result = self._stopped_result(job, outcome, stopped_by)
        if outcome.kind == "cancelled":
            state, error = "cancelled", None
        else:
            state, error = _answer_state(result)
        self._finish(job, state, outcome.elapsed_s, result=result, error=error)

    def _stopped_result(self, job: Job, outcome: Outcome, stopped_by: str) -> dict[str, Any]:
        """The answer of a placement whose worker was killed: the latest incumbent as the engine
        validated it (`feasible`), given the best bound seen since, or `no_solution`."""
        stretch = f" x {DETERMINISTIC_STRETCH:g} (deterministic)" if job.record.summary.get("deterministic") else ""
        why = {"deadline": f"the deadline ({job.time_limit_s:g} s time limit{stretch} + "
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

    def _run_again(self, job: Job, outcome: Outcome) -> None:
        """The machine running the job went away (a cluster node died): queue it again at the
        front, counted in `interruptions`; past PLACER_MAX_REQUEUES it is failed."""
        with self._cond:
            rec = job.record
            again = rec.interruptions < self.settings.max_requeues and not self._stopping
            if again:
                rec.interruptions += 1
                rec.state, rec.started_at, rec.progress, rec.worker = "queued", None, None, None
                job.incumbent, job.bound_ms = None, None
        log.warning("a solve's node was lost", extra={"job": rec.id, "request_id": job.request_id,
                                                      "detail": outcome.detail, "run_again": again})
        if not again:
            detail = (f"{outcome.detail}; the job was interrupted {rec.interruptions + 1} time(s), the most "
                      f"PLACER_MAX_REQUEUES ({self.settings.max_requeues}) allows"
                      if not self._stopping else f"{outcome.detail} while the service was stopping")
            self._finish(job, "failed", outcome.elapsed_s, error={"code": "interrupted", "detail": detail})
            return
        self._save(job, state="queued", started_at=None, progress=None, worker=None,
                   interruptions=rec.interruptions)
        with self._cond:
            (self._job_queue if job.persistent else self._sync_queue).appendleft(job)
            self._cond.notify()

    def _interrupt(self, job: Job) -> None:
        """Shutdown during a job: a persistent one is marked interrupted (re-queued at the next
        start); a synchronous caller gets 503."""
        with self._cond:
            job.record.state = "interrupted"
        self._save(job, state="interrupted", progress=job.record.progress)
        with self._cond:
            self._active.pop(job.record.id, None)
        self._resolve_error(job, ServiceStoppingError("the service is shutting down; the solve was stopped"))

    def _finish(self, job: Job, state: str, elapsed_s: float, result: dict[str, Any] | None = None,
                error: dict[str, Any] | None = None) -> None:
        log.info("job finished", extra={
            "job": job.record.id, "request_id": job.request_id, "kind": job.record.kind, "state": state,
            "status": (result or {}).get("status"), "solver": job.solver, "elapsed_s": round(elapsed_s, 3)})
        with self._cond:
            rec = job.record
            rec.state, rec.result, rec.error, rec.finished_at = state, result, error, time.time()
            snapshot = copy.copy(rec)
        self._save(job, state=state, result=result, error=error, finished_at=rec.finished_at, progress=rec.progress)
        with self._cond:  # after the save: until then GET reads the job from memory, never a stale row
            self._active.pop(rec.id, None)
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
