"""Bounded work (issue 11): sizes are refused before validation, crossover sweeps are capped,
and heavy requests run off the event loop so /healthz keeps answering. Real HTTP on loopback."""
from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from service_helpers import TWO_GPUS, ServiceProcess, layered_graph

from api.errors import LimitExceededError
from api.routes.crossover import _check_points
from api.settings import Settings
from placer.crossover import parse_config

CROSSOVER_POINTS = 40


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("bounded"), workers=1, queue_size=4,
                         max_crossover_points=CROSSOVER_POINTS, compute_threads=1)
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def client(service: ServiceProcess) -> Iterator[httpx.Client]:
    with service.client(timeout=300.0) as c:
        yield c


def chain(n: int) -> dict[str, Any]:
    ops = [{"id": f"o{i}", "time_ms": 1} for i in range(n)]
    edges = [{"src": f"o{i}", "dst": f"o{i + 1}", "bytes": 1} for i in range(n - 1)]
    return {"ops": ops, "edges": edges}


def test_a_100k_op_graph_is_refused_by_counting_before_validation(client: httpx.Client) -> None:
    """The body is also invalid (an op without time_ms): validation would answer invalid_request
    with that; counting first answers the limit, naming the field."""
    graph = chain(100_000)
    del graph["ops"][5]["time_ms"]
    reply = client.post("/v1/placements", json={"graph": graph, "hardware": TWO_GPUS})
    assert reply.status_code == 422, reply.text
    assert reply.json()["code"] == "limit_exceeded"
    assert reply.json()["detail"] == "graph.ops: 100000 given, this service accepts at most 5000 (PLACER_MAX_OPS)"


@pytest.mark.parametrize("path", ["/v1/simulations", "/v1/validations"])
def test_edges_and_devices_are_counted_for_every_endpoint_taking_a_graph(client: httpx.Client, path: str) -> None:
    graph = {"ops": [{"id": "a"}], "edges": [{"src": "a", "dst": "a"}] * 50_001}
    reply = client.post(path, json={"graph": graph, "hardware": TWO_GPUS, "placement": {}})
    assert reply.status_code == 422 and reply.json()["code"] == "limit_exceeded", reply.text
    assert reply.json()["detail"].startswith("graph.edges: 50001 given") and "PLACER_MAX_EDGES" in reply.text
    hardware = {"devices": [{"id": f"g{i}"} for i in range(257)], "links": []}
    reply = client.post(path, json={"graph": {"ops": []}, "hardware": hardware, "placement": {}})
    assert reply.status_code == 422 and "hardware.devices: 257 given" in reply.json()["detail"], reply.text


def crossover(devices: list[int], **extra: Any) -> dict[str, Any]:
    return {"devices": devices, "epochs": {"by_width": {"1": 1.0, str(devices[-1]): 1.5}},
            "mp_speedup": {"2": 1.5}, **extra}


def test_crossover_device_counts_are_capped(client: httpx.Client) -> None:
    at_cap = client.post("/v1/crossover", json=crossover(list(range(1, CROSSOVER_POINTS + 1))))
    assert at_cap.status_code == 200, at_cap.text
    over = client.post("/v1/crossover", json=crossover(list(range(1, CROSSOVER_POINTS + 2))))
    assert over.status_code == 422, over.text
    assert over.json() == {"code": "limit_exceeded", "detail": f"devices: {CROSSOVER_POINTS + 1} given, this "
                           f"service accepts at most {CROSSOVER_POINTS} (PLACER_MAX_CROSSOVER_POINTS)"}


def test_crossover_tables_are_capped_too(client: httpx.Client) -> None:
    table = {str(n): 1.0 for n in range(1, CROSSOVER_POINTS + 2)}
    reply = client.post("/v1/crossover", json=crossover([1, 2], epochs={"by_width": table}))
    assert reply.status_code == 422 and reply.json()["detail"].startswith("epochs.by_width: 41 given"), reply.text
    reply = client.post("/v1/crossover", json=crossover([1, 2], mp_speedup={str(m): 1.1 for m in range(2, 43)}))
    assert reply.status_code == 422 and reply.json()["detail"].startswith("mp_speedup.given: 41 given"), reply.text


def test_validated_crossover_configs_are_checked_against_the_cap() -> None:
    """The same limit on the parsed config, for bodies the raw count does not see (a proxy's prefix)."""
    settings = Settings(max_crossover_points=3)
    _check_points(parse_config(crossover([1, 2, 4])), settings)
    with pytest.raises(LimitExceededError, match=r"^devices: 4 given, .* at most 3 \(PLACER_MAX_CROSSOVER_POINTS\)"):
        _check_points(parse_config(crossover([1, 2, 4, 8])), settings)
    table = {"scaling_efficiency": {"table": {"2": 0.9, "4": 0.9, "8": 0.9, "16": 0.9}}}
    with pytest.raises(LimitExceededError, match=r"^scaling_efficiency.table: 4 given"):
        _check_points(parse_config(crossover([1, 2], **table)), settings)


def test_validation_errors_keep_their_shape(client: httpx.Client) -> None:
    """Bodies are validated in a thread now: the 422 must read as FastAPI's did."""
    reply = client.post("/v1/simulations", json={"graph": {"ops": [{"id": "a", "time_ms": "x"}]},
                                                  "hardware": TWO_GPUS, "placement": {"a": "gpu0"}})
    assert reply.status_code == 422, reply.text
    body = reply.json()
    assert body["code"] == "invalid_request"
    assert body["errors"][0]["loc"] == ["body", "graph", "ops", 0, "time_ms"]
    assert body["detail"].startswith("graph.ops[0] (id 'a').time_ms: ")
    assert client.post("/v1/placements", json=[1, 2]).json()["code"] == "invalid_request"


def test_healthz_answers_while_a_big_simulation_runs(client: httpx.Client, service: ServiceProcess) -> None:
    """A 5,000-op replay (seconds of validation and simulation) runs in a thread: /healthz keeps
    answering meanwhile. With the work on the event loop no answer could arrive until it ends."""
    graph = layered_graph(5000)
    placement = {op["id"]: f"gpu{i % 2}" for i, op in enumerate(graph["ops"])}
    body = {"graph": graph, "hardware": TWO_GPUS, "placement": placement, "contention": True}
    answer: dict[str, httpx.Response] = {}

    def replay() -> None:
        with service.client(timeout=300.0) as own:
            answer["simulation"] = own.post("/v1/simulations", json=body)

    worker = threading.Thread(target=replay)
    worker.start()
    answered_meanwhile = 0
    with service.client(timeout=300.0) as probe:
        while worker.is_alive():
            if probe.get("/healthz").status_code == 200 and worker.is_alive():
                answered_meanwhile += 1
            worker.join(0.05)
    assert answer["simulation"].status_code == 200, answer["simulation"].text
    assert answer["simulation"].json()["makespan_ms"] > 0
    assert answered_meanwhile >= 3
