"""The job store failing under a running service, through real HTTP: a full disk (injected by
`FaultyStore` while `<db>.fault` exists), a record SQLite refuses, the store file deleted. Jobs
are refused with 503 `store_unavailable` (synchronous solves still run), no slot thread dies,
finished jobs are held in memory and written when the store is back, /healthz is 503 naming
the cause meanwhile and 200 again without a restart, and a restart finds every job."""
from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import DIAMOND, TWO_GPUS, ServiceProcess, four_gpus, layered_graph, wait_for_job

FAULTY = "tests.api.faulty_store:FaultyStore"
ASYNC_DIAMOND = {"graph": DIAMOND, "hardware": TWO_GPUS, "options": {"async": True, "solver": "cpsat"}}
SYNC_DIAMOND = {"graph": DIAMOND, "hardware": TWO_GPUS, "options": {"solver": "cpsat", "time_limit_s": 10}}
LONG = {"graph": layered_graph(60), "hardware": four_gpus(),
        "options": {"async": True, "solver": "cpsat", "time_limit_s": 60, "threads": 1}}


@pytest.fixture()
def service(tmp_path: Path) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path, workers=2, store_class=FAULTY).start()
    yield svc
    svc.stop()


def _fault(svc: ServiceProcess, text: str = "") -> Path:
    path = Path(svc.settings["db_path"] + ".fault")
    path.write_text(text)
    return path


def _healthy_again(client: httpx.Client, timeout_s: float = 60.0) -> dict[str, Any]:
    end = time.monotonic() + timeout_s
    while (reply := client.get("/healthz")).status_code != 200 and time.monotonic() < end:
        time.sleep(0.1)
    assert reply.status_code == 200, reply.text
    return reply.json()


def _stored(db: Path, job_id: str, state: str, timeout_s: float = 30.0) -> None:
    """Wait until the store file itself holds the job in `state` (GET shows a job's new state
    from memory a moment before it is written)."""
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            row = conn.execute("SELECT state FROM jobs WHERE id = ?", (job_id,)).fetchone()
        if row is not None and row[0] == state:
            return
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} not stored as {state} within {timeout_s} s")


def _restarted(svc: ServiceProcess, **settings: Any) -> ServiceProcess:
    svc.stop(signal.SIGKILL)
    again = ServiceProcess(svc.workdir, workers=2, **settings)
    return again.start()


def test_a_full_store_refuses_jobs_with_503_keeps_solving_and_recovers(service: ServiceProcess) -> None:
    with service.client() as client:
        fault = _fault(service)
        refused = client.post("/v1/placements", json=ASYNC_DIAMOND)
        assert refused.status_code == 503, refused.text
        assert refused.json()["code"] == "store_unavailable"
        assert "database or disk is full" in refused.json()["detail"]
        assert refused.headers["Retry-After"] == "5"
        health = client.get("/healthz")
        assert health.status_code == 503 and health.json()["status"] == "failing"
        assert any("database or disk is full" in p for p in health.json()["problems"])
        solved = client.post("/v1/placements", json=SYNC_DIAMOND)  # synchronous solves need no store
        assert solved.status_code == 200 and solved.json()["status"] == "optimal"
        fault.unlink()
        assert _healthy_again(client)["problems"] == []
        accepted = client.post("/v1/placements", json=ASYNC_DIAMOND)
        assert accepted.status_code == 202, accepted.text
        assert wait_for_job(client, accepted.json()["job_id"])["state"] == "succeeded"


def test_jobs_finish_in_memory_while_the_store_is_full_and_are_written_when_space_returns(
        service: ServiceProcess) -> None:
    with service.client() as client:
        long_id = client.post("/v1/placements", json=LONG).json()["job_id"]
        assert wait_for_job(client, long_id, until=("running",))["state"] == "running"
        while client.get(f"/v1/jobs/{long_id}").json()["progress"] is None:
            time.sleep(0.05)
        # one worker runs jobs (PLACER_JOB_WORKERS default: all but one), so this one waits
        short_id = client.post("/v1/placements", json=ASYNC_DIAMOND).json()["job_id"]
        assert client.get(f"/v1/jobs/{short_id}").json()["state"] == "queued"
        fault = _fault(service)
        cancelled = client.delete(f"/v1/jobs/{long_id}").json()  # its final state cannot be written
        assert cancelled["state"] == "cancelled" and cancelled["result"]["stopped_by"] == "cancel"
        short = wait_for_job(client, short_id)  # runs on the same slot: its thread survived
        assert short["state"] == "succeeded" and short["result"]["status"] == "optimal"
        health = client.get("/healthz").json()
        assert health["status"] == "failing"
        assert any("2 job states held in memory" in p for p in health["problems"]), health
        for _ in range(2):  # both slots still take solves
            assert client.post("/v1/placements", json=SYNC_DIAMOND).status_code == 200
        fault.unlink()
        _healthy_again(client)
    again = _restarted(service)
    try:
        with again.client() as client:
            assert client.get(f"/v1/jobs/{long_id}").json() == cancelled
            assert client.get(f"/v1/jobs/{short_id}").json() == short
    finally:
        again.stop()
    assert "Exception in thread" not in service.log_path.read_text()


def test_a_record_sqlite_refuses_ends_the_job_failed_with_the_reason(service: ServiceProcess) -> None:
    with service.client() as client:
        fault = _fault(service, "refuse_results")
        job_id = client.post("/v1/placements", json=ASYNC_DIAMOND).json()["job_id"]
        end = time.monotonic() + 60
        while (job := client.get(f"/v1/jobs/{job_id}").json())["state"] != "failed" and time.monotonic() < end:
            time.sleep(0.1)
        assert job["state"] == "failed" and job["result"] is None
        assert job["error"]["code"] == "store_unavailable"
        assert job["error"]["detail"].startswith("the job ended succeeded but its record could not be stored")
        assert "too big" in job["error"]["detail"]
        fault.unlink()
        _healthy_again(client)


@pytest.mark.parametrize("what", ["db", "db-wal-shm-lock", "directory"])
def test_a_deleted_store_file_is_reported_then_recreated_with_every_job(tmp_path: Path, what: str) -> None:
    # the keeper would re-create the file within a second; here only the next write does, so
    # /healthz can be seen failing first
    db = tmp_path / "store" / "jobs.sqlite3"
    svc = ServiceProcess(tmp_path, workers=2, store_check_period_s=3600, db_path=db).start()
    try:
        with svc.client() as client:
            before = client.post("/v1/placements", json=ASYNC_DIAMOND).json()["job_id"]
            finished = wait_for_job(client, before)
            assert finished["state"] == "succeeded"
            _stored(db, before, "succeeded")  # else its last write could re-create the file first
            if what == "directory":
                shutil.rmtree(db.parent)
            for suffix in ("", "-wal", "-shm", ".lock") if what == "db-wal-shm-lock" else ("",) if what == "db" else ():
                os.remove(f"{db}{suffix}")
            health = client.get("/healthz")
            assert health.status_code == 503
            assert health.json()["problems"] == [f"job store file {db} was deleted while the service ran"]
            assert client.get(f"/v1/jobs/{before}").json() == finished
            after = client.post("/v1/placements", json=ASYNC_DIAMOND)  # the write re-creates the file
            assert after.status_code == 202, after.text
            after_job = wait_for_job(client, after.json()["job_id"])
            assert after_job["state"] == "succeeded"
            assert db.exists() and client.get("/healthz").status_code == 200
    finally:
        svc.stop(signal.SIGKILL)
    again = ServiceProcess(tmp_path, workers=2, db_path=db).start()
    try:
        with again.client() as client:
            assert client.get(f"/v1/jobs/{before}").json() == finished
            assert client.get(f"/v1/jobs/{after_job['id']}").json() == after_job
    finally:
        again.stop()


def test_the_keeper_recreates_a_deleted_store_file_by_itself(service: ServiceProcess) -> None:
    db = Path(service.settings["db_path"])
    with service.client() as client:
        job_id = client.post("/v1/placements", json=ASYNC_DIAMOND).json()["job_id"]
        finished = wait_for_job(client, job_id)
        os.remove(db)
        _healthy_again(client)
        assert db.exists()
    again = _restarted(service)
    try:
        with again.client() as client:
            assert client.get(f"/v1/jobs/{job_id}").json() == finished
    finally:
        again.stop()


def test_a_replaced_store_file_is_not_overwritten_and_jobs_are_refused_until_it_is_removed(
        service: ServiceProcess) -> None:
    db = Path(service.settings["db_path"])
    with service.client() as client:
        job_id = client.post("/v1/placements", json=ASYNC_DIAMOND).json()["job_id"]
        finished = wait_for_job(client, job_id)
        os.remove(db)
        db.write_bytes(b"someone else's file")
        refused = client.post("/v1/placements", json=ASYNC_DIAMOND)
        assert refused.status_code == 503 and refused.json()["code"] == "store_unavailable"
        assert "was replaced by another file" in refused.json()["detail"]
        health = client.get("/healthz")
        assert health.status_code == 503 and "was replaced by another file" in health.text
        assert db.read_bytes() == b"someone else's file"
        os.remove(db)
        _healthy_again(client)
        accepted = client.post("/v1/placements", json=ASYNC_DIAMOND)
        assert accepted.status_code == 202
    again = _restarted(service)
    try:
        with again.client() as client:
            assert client.get(f"/v1/jobs/{job_id}").json() == finished
            assert client.get(f"/v1/jobs/{accepted.json()['job_id']}").status_code == 200
    finally:
        again.stop()
