"""Jobs survive the service: stop it (SIGTERM or SIGKILL) in the middle of a job, start it again
on the same store: the job is re-queued and completes, finished results are intact, and no
worker of the stopped service is left running."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import httpx
import pytest
from service_helpers import DIAMOND, TWO_GPUS, ServiceProcess, four_gpus, layered_graph, wait_for_job

from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result

LONG = {"graph": layered_graph(60), "hardware": four_gpus(),
        "options": {"async": True, "solver": "cpsat", "time_limit_s": 2, "threads": 1}}


def _start_long_job(client: httpx.Client) -> str:
    reply = client.post("/v1/placements", json=LONG)
    assert reply.status_code == 202, reply.text
    job_id = reply.json()["job_id"]
    job = wait_for_job(client, job_id, timeout_s=30, until=("running",))
    assert job["state"] == "running"
    return job_id


def _gone(pid: int, timeout_s: float = 5.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        if not os.path.exists(f"/proc/{pid}"):
            return True
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(") ")[1].startswith("Z"):
                return True  # exited; waiting for its reaper
        except OSError:
            return True
        time.sleep(0.05)
    return False


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_a_job_interrupted_by_a_stop_completes_after_the_restart(tmp_path: Path, how: int) -> None:
    first = ServiceProcess(tmp_path, workers=1).start()
    with first.client() as client:
        done = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                    "options": {"async": True}}).json()["job_id"]
        finished = wait_for_job(client, done)
        assert finished["state"] == "succeeded"
        job_id = _start_long_job(client)
        workers = first.worker_pids()
        assert len(workers) == 1
    first.stop(how)
    # SIGTERM: the service kills its worker; SIGKILL: the orphaned worker notices and kills itself
    assert all(_gone(pid) for pid in workers), workers

    second = ServiceProcess(tmp_path, workers=1)
    second.port = first.port
    second.start()
    try:
        with second.client() as client:
            after = client.get(f"/v1/jobs/{job_id}").json()
            # re-queued; on a loaded machine the new worker may already have finished it (a 2 s
            # job) by the time the service answers its first request
            assert after["interruptions"] == 1 and after["state"] in ("queued", "running", "succeeded")
            job = wait_for_job(client, job_id, timeout_s=30)
            assert job["state"] == "succeeded", job
            assert job["result"]["status"] in ("optimal", "feasible")
            assert check_result(parse_graph(LONG["graph"]), parse_hardware(LONG["hardware"]),
                                parse_result(job["result"])) == []
            assert client.get(f"/v1/jobs/{done}").json() == finished
    finally:
        second.stop()


def test_a_job_interrupted_too_often_is_failed_not_retried_forever(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path, workers=1, max_requeues=0).start()
    with svc.client() as client:
        job_id = _start_long_job(client)
    svc.stop(signal.SIGKILL)
    again = ServiceProcess(tmp_path, workers=1, max_requeues=0).start()
    try:
        with again.client() as client:
            job = client.get(f"/v1/jobs/{job_id}").json()
            assert job["state"] == "failed" and job["error"]["code"] == "interrupted"
            assert job["error"]["detail"] == ("the service stopped during this job 1 time(s), the most "
                                            "PLACER_MAX_REQUEUES (0) allows; not retried again")
    finally:
        again.stop()
