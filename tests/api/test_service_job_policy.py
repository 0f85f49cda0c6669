"""How jobs (202) share the workers with synchronous solves, and how they end, through real HTTP:
synchronous solves go first and keep a worker of their own, jobs wait in their own bounded
queue, a queued job nobody polls is cancelled, and a job whose worker is killed is `failed`
with the reason (its best placement kept)."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
from service_helpers import DIAMOND, TWO_GPUS, ServiceProcess, four_gpus, layered_graph, wait_for_job

from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result

LONG = {"graph": layered_graph(60), "hardware": four_gpus(),
        "options": {"async": True, "solver": "cpsat", "time_limit_s": 60, "threads": 1}}
ASYNC_DIAMOND = {"graph": DIAMOND, "hardware": TWO_GPUS, "options": {"async": True}}
SYNC_DIAMOND = {"graph": DIAMOND, "hardware": TWO_GPUS, "options": {"solver": "cpsat", "time_limit_s": 10}}


def _running_with_incumbent(client: httpx.Client, body: dict) -> str:
    reply = client.post("/v1/placements", json=body)
    assert reply.status_code == 202, reply.text
    job_id = reply.json()["job_id"]
    assert wait_for_job(client, job_id, until=("running",))["state"] == "running"
    while (client.get(f"/v1/jobs/{job_id}").json()["progress"] or {}).get("incumbent_ms") is None:
        time.sleep(0.05)
    return job_id


def test_synchronous_solves_go_first_and_jobs_have_their_own_queue(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path, workers=2, queue_size=0, job_queue_size=1).start()
    try:
        with svc.client() as client:
            first = _running_with_incumbent(client, LONG)
            second = client.post("/v1/placements", json=ASYNC_DIAMOND)
            assert second.status_code == 202
            third = client.post("/v1/placements", json=ASYNC_DIAMOND)
            assert third.status_code == 503 and third.json()["code"] == "queue_full"
            assert "1 jobs are waiting (PLACER_JOB_QUEUE_SIZE 1)" in third.json()["detail"]
            # the second job waits although a worker is free: that worker is kept for callers who wait
            assert client.get(f"/v1/jobs/{second.json()['job_id']}").json()["state"] == "queued"
            for _ in range(2):
                solved = client.post("/v1/placements", json=SYNC_DIAMOND)
                assert solved.status_code == 200 and solved.json()["status"] == "optimal"
            assert client.get(f"/v1/jobs/{second.json()['job_id']}").json()["state"] == "queued"
            assert client.delete(f"/v1/jobs/{first}").json()["state"] == "cancelled"
            assert wait_for_job(client, second.json()["job_id"])["state"] == "succeeded"
    finally:
        svc.stop()


def test_a_queued_job_nobody_polls_is_cancelled_as_abandoned(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path, workers=1, job_abandon_s=1, store_check_period_s=0.2).start()
    try:
        with svc.client() as client:
            running = _running_with_incumbent(client, LONG)
            forgotten = client.post("/v1/placements", json=ASYNC_DIAMOND).json()["job_id"]
            end = time.monotonic() + 60
            while client.get("/healthz").json()["queue_depth"] > 0 and time.monotonic() < end:
                time.sleep(0.1)  # polling /healthz, never the forgotten job
            job = client.get(f"/v1/jobs/{forgotten}").json()
            assert job["state"] == "cancelled" and job["error"]["code"] == "abandoned"
            assert job["error"]["detail"] == ("cancelled before it started: nobody polled it for 1 s "
                                              "(PLACER_JOB_ABANDON_S)")
            assert client.get(f"/v1/jobs/{running}").json()["state"] == "running"  # running jobs are kept
            client.delete(f"/v1/jobs/{running}")
    finally:
        svc.stop()


def test_a_job_whose_worker_is_killed_fails_with_the_reason_and_keeps_its_incumbent(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path, workers=1).start()
    try:
        with svc.client() as client:
            job_id = _running_with_incumbent(client, LONG)
            [worker] = svc.worker_pids()
            os.kill(worker, signal.SIGKILL)
            job = wait_for_job(client, job_id)
            assert job["state"] == "failed" and job["error"]["code"] == "worker_failed"
            assert job["error"]["detail"] == ("the solve worker died (signal 9); the best placement it had "
                                              "found is the result")
            assert job["result"]["status"] == "feasible" and job["result"]["stopped_by"] == "worker_died"
            assert check_result(parse_graph(LONG["graph"]), parse_hardware(LONG["hardware"]),
                                parse_result(job["result"])) == []
            solved = client.post("/v1/placements", json=SYNC_DIAMOND)  # a fresh worker took its place
            assert solved.status_code == 200 and solved.json()["status"] == "optimal"
    finally:
        svc.stop()
