"""A long CBC solve is cut at its deadline from outside: the answer comes at time limit + grace,
carries the best validated incumbent, the service answers other requests meanwhile, and no
process of the killed worker (CBC included) is left.

The engine keeps its own limit (tests/test_time_limits.py), so the service's deadline is a
safety net: to reach it, the worker runs the real solve with twice the limit the
service enforces (tests/api/overrunning_target.py)."""
from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest
from service_helpers import DIAMOND, TWO_GPUS, ServiceProcess, four_gpus, group_members, layered_graph

from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result

TIME_LIMIT_S = 2.0
GRACE_S = 0.0  # no grace: CBC, given twice the limit by the worker, is still running at the kill


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("deadline"), workers=1, deadline_grace_s=GRACE_S,
                         solve_target="tests.api.overrunning_target:overrunning_solve")
    svc.start()
    yield svc
    svc.stop()


def test_a_long_cbc_solve_is_cut_at_its_deadline_and_leaves_no_process(service: ServiceProcess) -> None:
    graph, hardware = layered_graph(60), four_gpus()
    [worker] = service.worker_pids()
    seen: set[str] = set()
    stop = threading.Event()

    def watch() -> None:  # what runs in the worker's process group during the solve
        while not stop.is_set():
            seen.update(name for _, name in group_members(worker))
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    with service.client() as client:
        health_s: list[float] = []

        def probe() -> None:  # the service keeps answering while the solve runs
            time.sleep(1.0)
            began = time.perf_counter()
            assert client.get("/healthz").status_code == 200
            health_s.append(time.perf_counter() - began)

        prober = threading.Thread(target=probe)
        prober.start()
        began = time.monotonic()
        reply = client.post("/v1/placements", json={"graph": graph, "hardware": hardware,
                                                    "options": {"solver": "cbc", "time_limit_s": TIME_LIMIT_S}})
        took = time.monotonic() - began
        prober.join()
    stop.set()
    watcher.join()
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert "cbc" in seen, f"CBC never ran in the worker's group (saw {sorted(seen)})"
    assert result["stopped_by"] == "deadline"
    assert TIME_LIMIT_S <= took < TIME_LIMIT_S + 1.5
    assert result["status"] == "feasible" and result["solver"] == "cbc"
    assert 0 < result["gap"] < 1 and result["lower_bound_ms"] <= result["makespan_ms"]
    assert check_result(parse_graph(graph), parse_hardware(hardware), parse_result(result)) == []
    assert group_members(worker) == []  # the worker and its CBC child are gone, reaped
    assert health_s and health_s[0] < 0.5


def test_the_pool_recovers_after_a_kill(service: ServiceProcess) -> None:
    with service.client() as client:
        end = time.monotonic() + 30
        while client.get("/healthz").json()["workers_alive"] != 1 and time.monotonic() < end:
            time.sleep(0.1)
        reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS})
        assert reply.status_code == 200 and reply.json()["status"] == "optimal"
        assert "placer_deadline_kills_total 1" in client.get("/metrics").text
