"""The worker machinery without a solver: deadlines and cancels kill the whole process group,
crashes and errors become answers, the queue is bounded, the store survives restarts."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from service_helpers import process_group_alive

from api.errors import JobConflictError, QueueFullError, rebuild_worker_error
from api.jobs import JobManager, final_answer
from api.pool import WorkerProcess, become_subreaper
from api.settings import Settings
from api.store import JobRecord, JobStore, StoreLockedError
from placer.budget import DETERMINISTIC_STRETCH
from placer.errors import InvalidGraphError

TARGETS = "tests.api.dummy_targets"


@pytest.fixture(scope="module", autouse=True)
def _subreaper() -> None:
    become_subreaper()  # as the service does: killed workers' children are reaped at once


def _pids(path: Path) -> tuple[int, int]:
    worker, child = path.read_text().split()
    return int(worker), int(child)


def _started(target: str) -> WorkerProcess:
    worker = WorkerProcess(f"{TARGETS}:{target}")
    worker.start(timeout_s=30)
    return worker


def test_deadline_kills_the_worker_and_its_child_and_keeps_the_incumbent(tmp_path: Path) -> None:
    worker = _started("stubborn")
    pid_file = tmp_path / "pids"
    began = time.monotonic()
    outcome = worker.run({"pid_file": str(pid_file)}, 1.0, lambda ev: None, threading.Event())
    took = time.monotonic() - began
    assert outcome.kind == "deadline"
    # the worker never returns: ending long before its 300 s child is the kill; the margin
    # above the 1 s deadline is for a loaded machine, never a pass or fail by load
    assert 1.0 <= took < 30.0
    assert outcome.last_progress is not None and outcome.last_progress["bound_ms"] == 8.0
    worker_pid, child_pid = _pids(pid_file)
    assert worker_pid == worker.pid
    assert not process_group_alive(worker_pid)
    assert not os.path.exists(f"/proc/{child_pid}") and not os.path.exists(f"/proc/{worker_pid}")


def test_cancel_kills_the_group(tmp_path: Path) -> None:
    worker = _started("stubborn")
    cancel = threading.Event()
    threading.Timer(0.5, cancel.set).start()
    outcome = worker.run({"pid_file": str(tmp_path / "pids")}, 60.0, lambda ev: None, cancel)
    assert outcome.kind == "cancelled" and outcome.elapsed_s < 30.0  # of a 60 s limit: the cancel ended it
    worker_pid, child_pid = _pids(tmp_path / "pids")
    assert not process_group_alive(worker_pid) and not os.path.exists(f"/proc/{child_pid}")


def test_a_crash_is_an_outcome_not_an_exception() -> None:
    worker = _started("crash")
    outcome = worker.run({}, 30.0, lambda ev: None, threading.Event())
    assert outcome.kind == "crashed"
    assert outcome.detail == "the solve worker died (exit code 3)"


def test_an_input_error_keeps_the_worker_and_keeps_its_class() -> None:
    worker = WorkerProcess(f"{TARGETS}:bad_input")
    worker.start(timeout_s=30)
    first = worker.run({}, 30.0, lambda ev: None, threading.Event())
    assert first.kind == "error" and first.error is not None
    assert first.error["type"] == "InvalidGraphError" and first.error["input"] is True
    rebuilt = rebuild_worker_error(first.error)
    assert isinstance(rebuilt, InvalidGraphError)
    assert str(rebuilt) == "graph: ops[0] (id 'a').time_ms: must be finite"
    pid = worker.pid
    second = worker.run({}, 30.0, lambda ev: None, threading.Event())
    assert second.kind == "error" and worker.pid == pid and worker.alive()
    worker.stop()


def test_progress_events_are_forwarded_in_order() -> None:
    worker = _started("echo")
    seen: list[str] = []
    outcome = worker.run({"x": 1}, 30.0, lambda ev: seen.append(ev["message"]), threading.Event())
    assert outcome.kind == "done" and seen == ["echo"]
    assert outcome.result == {"echo": {"x": 1}, "pid": worker.pid}
    worker.stop()


def _manager(tmp_path: Path, target: str, **settings: object) -> JobManager:
    base = {"db_path": tmp_path / "jobs.sqlite3", "workers": 1, "queue_size": 4, "deadline_grace_s": 0.5,
            "solve_target": f"{TARGETS}:{target}"}
    manager = JobManager(Settings(**{**base, **settings}))
    manager.start()
    assert manager.wait_ready(30)
    return manager


def test_a_killed_placement_returns_its_incumbent_with_the_gap_of_the_best_bound(tmp_path: Path) -> None:
    manager = _manager(tmp_path, "stubborn")
    try:
        job = manager.submit("placement", {"pid_file": str(tmp_path / "p")},
                             {"solver": "cbc", "time_limit_s": 0.5}, persistent=False)
        rec = job.future.result(timeout=10)
        assert rec.state == "succeeded"
        result = rec.result
        assert result is not None
        # incumbent 10 ms with bound 5 ms; a later event proved 8 ms: gap (10 - 8) / 10
        assert result["status"] == "feasible" and result["stopped_by"] == "deadline"
        assert result["lower_bound_ms"] == 8.0 and result["gap"] == pytest.approx(0.2)
        assert 1.0 <= result["solve_time_s"] < 2.0
        none = manager.submit("placement", {"pid_file": str(tmp_path / "q"), "with_incumbent": False},
                              {"solver": "cbc", "time_limit_s": 0.5}, persistent=False)
        rec = none.future.result(timeout=10)
        assert rec.result is not None and rec.result["status"] == "no_solution"
        assert rec.result["reason"].startswith("the deadline (0.5 s time limit + 0.5 s grace) passed")
        assert rec.state == "failed" and rec.error is not None and rec.error["code"] == "no_solution"
        assert rec.error["detail"] == rec.result["reason"]
    finally:
        manager.stop()


def test_a_deterministic_placement_gets_a_stretched_deadline(tmp_path: Path) -> None:
    # deterministic work takes longer on a busy machine: killing it at limit + grace would make
    # its answer depend on the load (placer.budget.DETERMINISTIC_STRETCH limits instead)
    manager = _manager(tmp_path, "stubborn")
    try:
        job = manager.submit("placement", {"pid_file": str(tmp_path / "p"), "with_incumbent": False},
                             {"solver": "cpsat", "time_limit_s": 0.3, "deterministic": True}, persistent=False)
        assert job.deadline_s == pytest.approx(0.3 * DETERMINISTIC_STRETCH + 0.5)
        rec = job.future.result(timeout=20)
        assert rec.result is not None and rec.result["status"] == "no_solution"
        assert rec.result["reason"].startswith(
            f"the deadline (0.3 s time limit x {DETERMINISTIC_STRETCH:g} (deterministic) + 0.5 s grace) passed")
        assert rec.result["solve_time_s"] >= job.deadline_s - 0.05
    finally:
        manager.stop()


def test_a_no_solution_answer_ends_the_job_failed_with_its_reason(tmp_path: Path) -> None:
    manager = _manager(tmp_path, "no_solution")
    try:
        job = manager.submit("placement", {}, {"solver": "cpsat", "time_limit_s": 5}, persistent=True)
        rec = job.future.result(timeout=10)
        assert rec.state == "failed" and rec.error == {
            "type": "NoSolution", "code": "no_solution", "detail": "time limit reached before any placement was found"}
        assert rec.result is not None and rec.result["status"] == "no_solution"
        stored = manager.store.get(job.record.id)
        assert stored is not None and (stored.state, stored.error, stored.result) == (rec.state, rec.error, rec.result)
        assert final_answer(rec) == rec.result  # a synchronous caller still gets the answer (200)
    finally:
        manager.stop()


def test_a_worker_that_dies_fails_its_job_and_keeps_the_incumbent(tmp_path: Path) -> None:
    manager = _manager(tmp_path, "dies_after_incumbent")
    try:
        job = manager.submit("placement", {}, {"solver": "cbc", "time_limit_s": 30}, persistent=True)
        rec = job.future.result(timeout=30)
        assert rec.state == "failed" and rec.error is not None and rec.error["code"] == "worker_failed"
        assert rec.error["detail"] == ("the solve worker died (signal 9); the best placement it had found "
                                       "is the result")
        assert rec.result is not None and rec.result["status"] == "feasible"
        assert rec.result["stopped_by"] == "worker_died"
        assert manager.store.get(job.record.id).state == "failed"
    finally:
        manager.stop()


class _ThreadKiller(BaseException):
    """Escapes the slot's `except Exception`, as no error of ours should."""


class _SlotDiesOnce(JobManager):
    def _spawn(self, index: int) -> WorkerProcess | None:
        if not getattr(self, "_killed", False):
            self._killed = True
            raise _ThreadKiller("slot thread killed")
        return super()._spawn(index)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")  # the death is the point
def test_a_slot_thread_that_dies_is_reported_and_started_again(tmp_path: Path) -> None:
    settings = Settings(db_path=tmp_path / "jobs.sqlite3", workers=1, store_check_period_s=3600,
                        solve_target=f"{TARGETS}:echo")
    manager = _SlotDiesOnce(settings)
    manager.start()
    try:
        end = time.monotonic() + 10
        while not manager.problems() and time.monotonic() < end:
            time.sleep(0.01)
        assert manager.problems() == ["solve slot 0 stopped (restarted within 3600 s)"]
        manager._supervise_slots()  # what the keeper does every PLACER_STORE_CHECK_PERIOD_S
        assert manager.wait_ready(30) and manager.problems() == []
        job = manager.submit("placement", {"x": 1}, {"time_limit_s": 5}, persistent=True)
        assert job.future.result(timeout=30).state == "succeeded"
    finally:
        manager.stop()


def test_the_queue_is_bounded(tmp_path: Path) -> None:
    manager = _manager(tmp_path, "stubborn", queue_size=1)
    try:
        request = {"pid_file": str(tmp_path / "p")}
        summary = {"solver": "cbc", "time_limit_s": 30}
        first = manager.submit("placement", request, summary, persistent=False)
        second = manager.submit("placement", request, summary, persistent=False)
        with pytest.raises(QueueFullError, match="all 1 solve workers are busy") as caught:
            manager.submit("placement", request, summary, persistent=False)
        assert caught.value.retry_after_s == 5
        for job in (second, first):
            manager.cancel(job.record.id)
        assert first.future.result(timeout=10).state == "cancelled"
    finally:
        manager.stop()


def test_a_worker_is_free_again_before_its_caller_hears_the_answer(tmp_path: Path) -> None:
    # no waiting room: the next solve, sent the moment the last one answered, needs the worker idle
    manager = _manager(tmp_path, "echo", queue_size=0)
    try:
        busy_when_answered: list[int] = []
        for i in range(3):
            job = manager.submit("placement", {"i": i}, {"solver": "cpsat", "time_limit_s": 5}, persistent=False)
            # the callback runs in the slot's thread as the answer is handed over, not after
            job.future.add_done_callback(lambda _, m=manager: busy_when_answered.append(m.running()))
            assert job.future.result(timeout=30).state == "succeeded"
        assert busy_when_answered == [0, 0, 0]
    finally:
        manager.stop()


def test_a_job_running_at_shutdown_is_requeued_at_the_next_start(tmp_path: Path) -> None:
    manager = _manager(tmp_path, "stubborn")
    job = manager.submit("placement", {"pid_file": str(tmp_path / "p")}, {"solver": "cbc", "time_limit_s": 30},
                         persistent=True)
    while manager.get(job.record.id).state != "running":
        time.sleep(0.05)
    manager.stop()
    store = JobStore(tmp_path / "jobs.sqlite3")
    store.open()
    assert store.get(job.record.id).state == "interrupted"
    store.close()
    again = _manager(tmp_path, "echo")
    try:
        end = time.monotonic() + 10
        while (rec := again.get(job.record.id)).state != "succeeded" and time.monotonic() < end:
            time.sleep(0.05)
        assert rec.state == "succeeded" and rec.interruptions == 1
        assert rec.result is not None and rec.result["echo"]["pid_file"] == str(tmp_path / "p")
    finally:
        again.stop()


def test_store_recovery_limits_requeues_and_purges_old_results(tmp_path: Path) -> None:
    store = JobStore(tmp_path / "s.sqlite3")
    store.open()
    now = time.time()

    def rec(job_id: str, state: str, interruptions: int = 0, finished_at: float | None = None) -> JobRecord:
        return JobRecord(id=job_id, kind="placement", state=state, request={}, summary={}, created_at=now,
                         interruptions=interruptions, finished_at=finished_at)

    store.insert(rec("a", "running"))
    store.insert(rec("b", "running", interruptions=3))
    store.insert(rec("c", "succeeded", finished_at=now - 100))
    store.insert(rec("d", "succeeded", finished_at=now))
    with pytest.raises(StoreLockedError, match="in use by another placer service"):
        JobStore(tmp_path / "s.sqlite3").open()
    queued = store.recover(max_requeues=3)
    assert [r.id for r in queued] == ["a"] and queued[0].interruptions == 1
    assert store.get("b").state == "failed" and store.get("b").error["code"] == "interrupted"
    assert store.purge(now - 50) == 1
    assert store.get("c") is None and store.get("d") is not None
    store.close()


def test_a_cancel_of_a_job_that_has_just_finished_is_a_conflict(tmp_path: Path) -> None:
    """A job is `succeeded` to every reader as soon as it finishes, before its record is saved
    and it leaves the active jobs: a cancel in that moment is a conflict, as after it (CI once
    got 200 from DELETE on a job its GET had just shown succeeded)."""
    manager = _manager(tmp_path, "echo")
    seen: list[str] = []
    save = manager._save

    def cancel_while_saving(job: Any, **fields: Any) -> None:
        if fields.get("state") == "succeeded":
            assert manager.get(job.record.id).state == "succeeded"
            try:
                manager.cancel(job.record.id, wait_s=1.0)
                seen.append("cancelled")
            except JobConflictError:
                seen.append("conflict")
        save(job, **fields)

    manager._save = cancel_while_saving  # type: ignore[method-assign]
    try:
        job = manager.submit("simulation", {"x": 1}, {}, persistent=True)
        assert job.future.result(timeout=30).state == "succeeded"
        assert seen == ["conflict"]
        with pytest.raises(JobConflictError):
            manager.cancel(job.record.id)
    finally:
        manager.stop()
