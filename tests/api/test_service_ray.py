"""`placer serve` with PLACER_EXECUTOR=ray on a real two-node Ray cluster on loopback (one CPU
per node, so two one-thread solves running at once must be on both nodes): jobs spread over
both nodes, cancel and the hard deadline on Ray, an API restart with a job on the cluster, and
a node killed mid-job (its raylet, by PID) with the job run again to a valid answer.

Outcomes only are asserted, never timings: every wait is on a state, with a generous timeout."""
from __future__ import annotations

import signal
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import start_ray_cluster, stop_ray_cluster
from service_helpers import DIAMOND, DIAMOND_OPTIMUM_MS, TWO_GPUS, ServiceProcess, four_gpus, layered_graph

from api.routes.crossover import _EXAMPLE_ENGINE as ENGINE_CROSSOVER
from benchmarks.graphs import fully_connected_hardware
from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result
from tests.test_decompose import diamonds

HARD = layered_graph(150)  # nobody proves it optimal: a solve runs to its limit


def _job(time_limit_s: float, **options: Any) -> dict[str, Any]:
    return {"graph": HARD, "hardware": four_gpus(),
            "options": {"async": True, "solver": "cpsat", "time_limit_s": time_limit_s, "threads": 1, **options}}


def _service(tmp_path: Path, cluster: Any, **settings: Any) -> ServiceProcess:
    return ServiceProcess(tmp_path, executor="ray", ray_address=cluster.address, **settings)


def _submit(client: httpx.Client, body: dict[str, Any]) -> str:
    reply = client.post("/v1/placements", json=body)
    assert reply.status_code == 202, reply.text
    return reply.json()["job_id"]


def _wait(client: httpx.Client, job_id: str, ok: Any, timeout_s: float = 180.0) -> dict[str, Any]:
    """Poll the job until `ok(job)`; the last document otherwise (the assertion shows it)."""
    end = time.monotonic() + timeout_s
    while True:
        job = client.get(f"/v1/jobs/{job_id}").json()
        if ok(job) or time.monotonic() > end:
            return job
        time.sleep(0.2)


def _running_on_ray(job: dict[str, Any]) -> bool:
    return job["state"] == "running" and (job.get("worker") or {}).get("executor") == "ray"


def _finished(job: dict[str, Any]) -> bool:
    return job["state"] in ("succeeded", "failed", "cancelled")


def _valid(body: dict[str, Any], result: dict[str, Any]) -> bool:
    return check_result(parse_graph(body["graph"]), parse_hardware(body["hardware"]), parse_result(result)) == []


def _gone(pid: int, timeout_s: float = 60.0) -> bool:
    end = time.monotonic() + timeout_s
    while time.monotonic() < end:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().split(") ")[1][0]
        except (OSError, IndexError):
            return True
        if state == "Z":
            return True
        time.sleep(0.1)
    return False


def test_jobs_run_on_both_nodes_report_the_cluster_and_cancel(tmp_path: Path, ray_cluster: Any) -> None:
    svc = _service(tmp_path, ray_cluster, workers=2, job_workers=2).start()
    try:
        with svc.client() as client:
            answer = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS})
            assert answer.status_code == 200, answer.text
            assert answer.json()["status"] == "optimal"
            assert answer.json()["makespan_ms"] == pytest.approx(DIAMOND_OPTIMUM_MS)

            # the crossover's engine-computed SU^M is a solve on the cluster too
            crossover = client.post("/v1/crossover", json=ENGINE_CROSSOVER)
            assert crossover.status_code == 200, crossover.text
            assert crossover.json()["format"] == "placer.crossover-result/v1"

            # "ray": the decomposition's components go to the cluster as tasks of their own
            spread = {"graph": diamonds(40, 5), "hardware": fully_connected_hardware(3, link_gb_per_s=1.0),
                      "options": {"ray": True, "threads": 1, "time_limit_s": 10, "coarsen": "off"}}
            answer = client.post("/v1/placements", json=spread)
            assert answer.status_code == 200, answer.text
            assert answer.json()["stats"]["decomposition_workers"] == 2, answer.json()["stats"]
            assert _valid(spread, answer.json())

            body = _job(120.0)
            jobs = [_submit(client, body) for _ in range(2)]
            running = [_wait(client, j, _running_on_ray) for j in jobs]
            assert all(_running_on_ray(j) for j in running), running
            # one CPU per node, one CPU per solve: the two solves run on the two nodes
            assert len({j["worker"]["node_id"] for j in running}) == 2
            assert {j["worker"]["host"] for j in running} == {"127.0.0.2", "127.0.0.3"}

            health = client.get("/healthz").json()
            assert health["status"] == "ok", health
            assert health["cluster"]["executor"] == "ray" and health["cluster"]["nodes"] == 2
            assert health["cluster"]["cpus"] == 2.0, health["cluster"]
            assert health["cluster"]["tasks_running"] == 2, health["cluster"]
            metrics = client.get("/metrics").text
            assert "placer_cluster_nodes 2" in metrics and "placer_cluster_tasks_running 2" in metrics

            for job in running:
                cancelled = client.delete(f"/v1/jobs/{job['id']}").json()
                assert cancelled["state"] == "cancelled", cancelled
                assert cancelled["worker"]["node_id"] == job["worker"]["node_id"]
                if cancelled["result"] is not None:
                    assert cancelled["result"]["stopped_by"] == "cancel" and _valid(body, cancelled["result"])
                # the solve process on the node dies with its cancelled Ray task
                assert _gone(job["worker"]["pid"]), job["worker"]
    finally:
        svc.stop()


def test_cancel_and_deadline_on_ray(tmp_path: Path, ray_cluster: Any) -> None:
    """The node's worker kills a solve that overruns its limit (the real engine given twice the
    limit, tests/api/overrunning_target.py): the answer is the incumbent, stopped by the deadline."""
    svc = _service(tmp_path, ray_cluster, workers=1, deadline_grace_s=0.0,
                   solve_target="tests.api.overrunning_target:overrunning_solve").start()
    try:
        with svc.client() as client:
            body = _job(3.0, solver="cbc")
            job_id = _submit(client, body)
            job = _wait(client, job_id, _finished)
            assert job["state"] == "succeeded", job
            assert job["worker"]["executor"] == "ray"
            result = job["result"]
            assert result["stopped_by"] == "deadline" and result["status"] == "feasible"
            assert _valid(body, result)
            assert _gone(job["worker"]["pid"]), job["worker"]
    finally:
        svc.stop()


def test_a_job_on_the_cluster_survives_an_api_restart(tmp_path: Path, ray_cluster: Any) -> None:
    body = _job(4.0)
    first = _service(tmp_path, ray_cluster, workers=1).start()
    with first.client() as client:
        job_id = _submit(client, body)
        job = _wait(client, job_id, _running_on_ray)
        assert _running_on_ray(job), job
    first.stop(signal.SIGKILL)
    # the driver is gone: Ray ends its task, and the solve process on the node follows
    assert _gone(job["worker"]["pid"]), job["worker"]

    second = _service(tmp_path, ray_cluster, workers=1)
    second.port = first.port
    second.start()
    try:
        with second.client() as client:
            after = client.get(f"/v1/jobs/{job_id}").json()
            # re-queued (a loaded machine may finish it before the service answers its first request)
            assert after["interruptions"] == 1 and after["state"] in ("queued", "running", "succeeded"), after
            done = _wait(client, job_id, _finished)
            assert done["state"] == "succeeded", done
            assert done["worker"]["executor"] == "ray" and done["interruptions"] == 1
            assert done["result"]["status"] in ("optimal", "feasible") and _valid(body, done["result"])
    finally:
        second.stop()


def test_a_job_whose_node_dies_is_run_again_to_a_valid_answer(tmp_path: Path) -> None:
    cluster = start_ray_cluster([1, 1])  # its own: this test kills a node
    svc = _service(tmp_path, cluster, workers=2, job_workers=2)
    try:
        svc.start()
        with svc.client() as client:
            body = _job(20.0)  # long enough for the second job to start while the first runs
            jobs = [_submit(client, body) for _ in range(2)]
            running = [_wait(client, j, _running_on_ray) for j in jobs]
            assert all(_running_on_ray(j) for j in running), running
            [victim] = [j for j in running if j["worker"]["host"] == cluster.nodes[1].ip]
            cluster.kill_raylet(1)
            again = _wait(client, victim["id"], _finished, timeout_s=300)
            assert again["state"] == "succeeded", again
            assert again["interruptions"] == 1
            assert again["worker"]["host"] == cluster.nodes[0].ip  # the only node left
            assert again["result"]["status"] in ("optimal", "feasible") and _valid(body, again["result"])
            assert _gone(victim["worker"]["pid"]), victim["worker"]
            [other] = [j for j in running if j is not victim]
            assert _wait(client, other["id"], _finished)["state"] == "succeeded"
            health = _wait_health(client, lambda h: h["cluster"]["nodes"] == 1)
            assert health["cluster"]["nodes"] == 1, health
    finally:
        svc.stop()
        stop_ray_cluster(cluster)


def _wait_health(client: httpx.Client, ok: Any, timeout_s: float = 120.0) -> dict[str, Any]:
    end = time.monotonic() + timeout_s
    while True:
        health = client.get("/healthz").json()
        if ok(health) or time.monotonic() > end:
            return health
        time.sleep(0.5)
