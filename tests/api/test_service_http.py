"""The service through real HTTP on loopback: every endpoint, exact answers on hand-computed
cases, and a corpus of malformed or hostile requests each answered 4xx with a precise message."""
from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import DIAMOND, DIAMOND_OPTIMUM_MS, TWO_GPUS, ServiceProcess, layered_graph, wait_for_job

from placer.crossover import parse_config, run
from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("http"), workers=2, queue_size=8, max_ops=100,
                         max_body_bytes=200_000, max_time_limit_s=60, async_ops_threshold=20)
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def client(service: ServiceProcess) -> Iterator[httpx.Client]:
    with service.client() as c:
        yield c


def _graph(**changes: Any) -> dict[str, Any]:
    doc = copy.deepcopy(DIAMOND)
    doc.update(changes)
    return doc


def _assert_valid(reply: dict[str, Any], graph: dict[str, Any], hardware: dict[str, Any]) -> None:
    assert check_result(parse_graph(graph), parse_hardware(hardware), parse_result(reply)) == []


# ------------------------------------------------------------------ placements


@pytest.mark.parametrize("solver", ["cpsat", "cbc", "highs"])
def test_the_diamond_is_placed_optimally_by_every_exact_solver(client: httpx.Client, solver: str) -> None:
    reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                "options": {"solver": solver, "time_limit_s": 20}})
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert result["format"] == "placer.result/v1" and result["status"] == "optimal"
    assert result["makespan_ms"] == pytest.approx(DIAMOND_OPTIMUM_MS, abs=1e-9)
    assert result["single_device_ms"] == pytest.approx(10.0)
    assert result["speedup"] == pytest.approx(10.0 / DIAMOND_OPTIMUM_MS)
    assert result["placement"]["a"] == result["placement"]["b"] != result["placement"]["c"] == result["placement"]["d"] \
        or result["placement"]["a"] == result["placement"]["c"] != result["placement"]["b"] == result["placement"]["d"]
    _assert_valid(result, DIAMOND, TWO_GPUS)


def test_a_preset_by_name(client: httpx.Client) -> None:
    reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": "dgx1_v100_quad"})
    assert reply.status_code == 200, reply.text
    result = reply.json()
    preset = client.get("/v1/hardware-graphs/dgx1_v100_quad").json()
    assert result["status"] == "optimal"
    _assert_valid(result, DIAMOND, preset)


def test_an_async_placement_is_a_job_that_finishes(client: httpx.Client) -> None:
    reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                "options": {"async": True}})
    assert reply.status_code == 202, reply.text
    accepted = reply.json()
    assert reply.headers["location"] == accepted["href"] == f"/v1/jobs/{accepted['job_id']}"
    job = wait_for_job(client, accepted["job_id"])
    assert job["state"] == "succeeded" and job["kind"] == "placement"
    assert job["request"] == {"solver": "cpsat", "time_limit_s": 10.0, "graph": "diamond", "ops": 4, "edges": 4,
                              "hardware": "two-gpus", "devices": 2, "deterministic": False}
    assert job["result"]["makespan_ms"] == pytest.approx(DIAMOND_OPTIMUM_MS)
    assert job["started_at"] >= job["created_at"] and job["finished_at"] >= job["started_at"]
    # cancelling a job that succeeded is a conflict, not a silent success
    late = client.delete(f"/v1/jobs/{accepted['job_id']}")
    assert late.status_code == 409 and late.json()["code"] == "job_conflict"


def test_a_big_graph_runs_as_a_job_even_without_async(client: httpx.Client) -> None:
    big = layered_graph(30)  # the fixture sets PLACER_ASYNC_OPS_THRESHOLD=20
    reply = client.post("/v1/placements", json={"graph": big, "hardware": TWO_GPUS, "options": {"solver": "heft"}})
    assert reply.status_code == 202, reply.text
    job = wait_for_job(client, reply.json()["job_id"])
    assert job["state"] == "succeeded" and job["result"]["solver"] == "heft"
    _assert_valid(job["result"], big, TWO_GPUS)


def test_cancel_kills_a_running_solve_and_keeps_its_incumbent(client: httpx.Client) -> None:
    graph = layered_graph(60)
    hardware = {**TWO_GPUS, "devices": [{"id": f"gpu{i}"} for i in range(4)],
                "links": [{"a": f"gpu{i}", "b": f"gpu{j}", "bandwidth_gb_per_s": 10.0}
                          for i in range(4) for j in range(i + 1, 4)]}
    reply = client.post("/v1/placements", json={"graph": graph, "hardware": hardware,
                                                "options": {"async": True, "solver": "cbc", "time_limit_s": 50}})
    assert reply.status_code == 202, reply.text
    job_id = reply.json()["job_id"]
    running = wait_for_job(client, job_id, timeout_s=30, until=("running",))
    assert running["state"] == "running"
    # progress names each phase from the start; the incumbent comes with the first placement found
    while (client.get(f"/v1/jobs/{job_id}").json()["progress"] or {}).get("incumbent_ms") is None:
        time.sleep(0.05)
    began = time.monotonic()
    cancelled = client.delete(f"/v1/jobs/{job_id}")
    assert time.monotonic() - began < 5.0
    assert cancelled.status_code == 200, cancelled.text
    job = cancelled.json()
    assert job["state"] == "cancelled"
    assert job["result"]["status"] == "feasible" and job["result"]["stopped_by"] == "cancel"
    _assert_valid(job["result"], graph, hardware)
    again = client.delete(f"/v1/jobs/{job_id}")
    assert again.status_code == 200 and again.json()["state"] == "cancelled"


# ------------------------------------------------------------------ simulation, validation


def test_simulation_of_a_placement_map(client: httpx.Client) -> None:
    placement = {"a": "gpu0", "b": "gpu0", "c": "gpu1", "d": "gpu1"}
    reply = client.post("/v1/simulations", json={"graph": DIAMOND, "hardware": TWO_GPUS, "placement": placement})
    assert reply.status_code == 200, reply.text
    sim = reply.json()
    assert sim["makespan_ms"] == pytest.approx(DIAMOND_OPTIMUM_MS) and sim["policy"] == "fifo"
    assert sim["device_busy_ms"] == {"gpu0": 5.0, "gpu1": 5.0}
    assert sim["link_bytes"] == {"gpu0->gpu1": 50_000_000}


def test_simulation_with_link_contention_serialises_transfers(client: httpx.Client) -> None:
    # a feeds b and c on the other GPU: both 25 MB transfers want gpu0->gpu1 at t = 1 ms.
    # Without contention both arrive at 2.005, b runs 2.005-3.005, c 3.005-4.005.
    # With contention the second waits for the first: arrives 3.01, c runs 3.01-4.01.
    graph = {"ops": [{"id": "a", "time_ms": 1.0}, {"id": "b", "time_ms": 1.0}, {"id": "c", "time_ms": 1.0}],
             "edges": [{"src": "a", "dst": "b", "bytes": 25_000_000}, {"src": "a", "dst": "c", "bytes": 25_000_000}]}
    body = {"graph": graph, "hardware": TWO_GPUS, "placement": {"a": "gpu0", "b": "gpu1", "c": "gpu1"}}
    free = client.post("/v1/simulations", json=body).json()
    busy = client.post("/v1/simulations", json={**body, "contention": True}).json()
    assert free["makespan_ms"] == pytest.approx(4.005)
    assert busy["makespan_ms"] == pytest.approx(4.01)


def test_simulation_of_a_result_replays_its_order(client: httpx.Client) -> None:
    result = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS}).json()
    sim = client.post("/v1/simulations", json={"graph": DIAMOND, "hardware": TWO_GPUS, "result": result}).json()
    assert sim["policy"] == "order" and sim["makespan_ms"] == pytest.approx(result["makespan_ms"])


def test_validation_accepts_a_solution_and_names_what_a_tampered_one_breaks(client: httpx.Client) -> None:
    result = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS}).json()
    good = client.post("/v1/validations", json={"graph": DIAMOND, "hardware": TWO_GPUS, "result": result})
    assert good.status_code == 200 and good.json() == {"valid": True, "status": "optimal", "violations": []}
    tampered = {**result, "makespan_ms": 5.0}
    bad = client.post("/v1/validations", json={"graph": DIAMOND, "hardware": TWO_GPUS, "result": tampered}).json()
    assert bad["valid"] is False
    assert bad["violations"] == [f"makespan_ms 5.0 but the latest op ends at {result['makespan_ms']}",
                                 f"lower_bound_ms {result['lower_bound_ms']} exceeds makespan_ms 5.0"]


# ------------------------------------------------------------------ presets, models, crossover


def test_hardware_presets(client: httpx.Client) -> None:
    rows = {r["name"]: r for r in client.get("/v1/hardware-graphs").json()}
    assert rows["dgx1_v100"]["devices"] == 8
    doc = client.get("/v1/hardware-graphs/dgx1_v100").json()
    assert doc["format"] == "placer.hardware/v1" and len(doc["devices"]) == 8
    parse_hardware(doc)


def test_models(client: httpx.Client) -> None:
    from placer import zoo

    rows = client.get("/v1/models", params={"batch": 16}).json()
    assert [r["name"] for r in rows] == zoo.list_models()
    resnet = next(r for r in rows if r["name"] == "resnet50")
    graph = client.get("/v1/models/resnet50", params={"batch": 16}).json()
    assert graph == parse_graph(zoo.build("resnet50", 16)).model_dump(mode="json", exclude_none=True)
    assert resnet["ops"] == len(graph["ops"]) and resnet["batch"] == 16
    missing = client.get("/v1/models/resnet51")
    assert missing.status_code == 404 and "zoo model 'resnet51' does not exist" in missing.json()["detail"]
    assert client.get("/v1/models/resnet50", params={"batch": 0}).status_code == 422


def test_crossover_with_given_speedups_matches_the_library(client: httpx.Client) -> None:
    import json

    config = json.loads((ROOT / "examples" / "crossover" / "gnmt.json").read_text())
    reply = client.post("/v1/crossover", json=config)
    assert reply.status_code == 200, reply.text
    assert reply.json() == json.loads(json.dumps(run(parse_config(config), allow_files=False).to_dict()))


def test_crossover_with_engine_speedups_runs_in_a_worker(client: httpx.Client) -> None:
    config = {"devices": [1, 2, 4], "epochs": {"by_width": {"1": 10, "4": 12}},
              "mp_speedup": {"engine": {"graph": DIAMOND, "hardware": {**TWO_GPUS, "devices": [
                  {"id": "gpu0"}, {"id": "gpu1"}]}, "m": [2], "time_limit_s": 5}}}
    reply = client.post("/v1/crossover", json=config)
    assert reply.status_code == 200, reply.text
    source = reply.json()["mp_speedup"]["2"]
    assert source["source"] == "engine" and source["status"] == "optimal"
    assert source["speedup"] == pytest.approx(10.0 / DIAMOND_OPTIMUM_MS)


# ------------------------------------------------------------------ observability


def test_healthz_metrics_and_request_ids(client: httpx.Client) -> None:
    deadline = time.monotonic() + 30  # a worker killed by an earlier cancel may still be restarting
    while True:
        health = client.get("/healthz", headers={"X-Request-ID": "trace-42"})
        body = health.json()
        if body["workers_alive"] == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    assert health.headers["x-request-id"] == "trace-42"
    assert body["status"] == "ok" and body["workers"] == body["workers_alive"] == 2
    assert body["solvers"] == {"cpsat": True, "cbc": True, "highs": True}
    assert body["queue_size"] == 8 and body["queue_depth"] >= 0
    assert len(client.get("/healthz").headers["x-request-id"]) == 32  # one is made when none is sent
    client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS})
    text = client.get("/metrics").text
    assert 'placer_http_requests_total{method="POST",route="/v1/placements",status="200"}' in text
    assert 'placer_solves_total{solver="cpsat",status="optimal"}' in text
    assert "# TYPE placer_solve_duration_seconds histogram" in text
    assert "placer_queue_depth 0" in text


def test_openapi_has_an_example_for_every_request_body(client: httpx.Client) -> None:
    schema = client.get("/openapi.json").json()
    bodies = 0
    for path, item in schema["paths"].items():
        for method, op in item.items():
            content = op.get("requestBody", {}).get("content", {}).get("application/json")
            if content is None:
                continue
            bodies += 1
            ref = content["schema"].get("$ref", "")
            component = schema["components"]["schemas"].get(ref.rsplit("/", 1)[-1], {})
            assert content.get("examples") or component.get("examples"), f"{method} {path} has no example"
    assert bodies == 4  # placements, simulations, validations, crossover


# ------------------------------------------------------------------ the hostile corpus

HW_DISCONNECTED = {"devices": [{"id": "g0"}, {"id": "g1"}], "links": []}


def _op(**fields: Any) -> dict[str, Any]:
    return _graph(ops=[{"id": "a", "time_ms": 1.0, **fields}], edges=[])


def _place(graph: Any = DIAMOND, hardware: Any = TWO_GPUS, **extra: Any) -> dict[str, Any]:
    return {"graph": graph, "hardware": hardware, **extra}


def _sim(**extra: Any) -> dict[str, Any]:
    return {"graph": DIAMOND, "hardware": TWO_GPUS, **extra}


PLACE = "/v1/placements"
# (name, method, path, json body or raw bytes, status, text the detail must contain)
CORPUS: list[tuple[str, str, str, Any, int, str]] = [
    ("cycle", "POST", PLACE, _place(_graph(edges=DIAMOND["edges"] + [{"src": "d", "dst": "a", "bytes": 1}])),
     422, "graph: the graph has a cycle: a -> b -> d -> a"),
    ("dangling edge", "POST", PLACE, _place(_graph(edges=[{"src": "a", "dst": "zz", "bytes": 1}])),
     422, "graph: edges[0] (a -> zz): dst names unknown op 'zz'"),
    ("self loop", "POST", PLACE, _place(_graph(edges=[{"src": "a", "dst": "a"}])), 422, "an op cannot feed itself"),
    ("duplicate op ids", "POST", PLACE, _place(_graph(ops=DIAMOND["ops"] + [{"id": "a", "time_ms": 1}])),
     422, "graph: duplicate op ids: 'a'"),
    ("NaN", "POST", PLACE, b'{"graph": {"ops": [{"id": "a", "time_ms": NaN}]}, "hardware": "dgx1_v100"}',
     400, "request body: NaN is not a JSON number"),
    ("Infinity", "POST", PLACE, b'{"graph": {"ops": [{"id": "a", "time_ms": -Infinity}]}, "hardware": "x"}',
     400, "request body: -Infinity is not a JSON number"),
    ("float overflow", "POST", PLACE, b'{"graph": {"ops": [{"id": "a", "time_ms": 1e999}]}, "hardware": "x"}',
     400, "number 1e999 is too large for a 64-bit float"),
    ("negative time", "POST", PLACE, _place(_op(time_ms=-1)), 422,
     "graph.ops[0] (id 'a').time_ms: Input should be greater than or equal to 0"),
    ("negative memory", "POST", PLACE, _place(_op(memory_bytes=-5)), 422,
     "graph.ops[0] (id 'a').memory_bytes: Input should be greater than or equal to 0"),
    ("negative edge bytes", "POST", PLACE, _place(_graph(edges=[{"src": "a", "dst": "b", "bytes": -1}])), 422,
     "graph.edges[0] (edge a -> b).bytes: Input should be greater than or equal to 0"),
    ("huge memory", "POST", PLACE, _place(_op(memory_bytes=10**30)), 422,
     "graph.ops[0] (id 'a').memory_bytes: Input should be less than or equal to 1000000000000000"),
    ("impossible memory", "POST", PLACE, _place(_op(memory_bytes=10**12)), 422,
     "op 'a' needs 1000000000000 bytes but the largest device it may use, 'gpu0', holds 16000000000 bytes"),
    ("more memory than the machine", "POST", PLACE,
     _place(_graph(ops=[{"id": o, "time_ms": 1, "memory_bytes": 10_000_000_000} for o in "abcd"], edges=[])),
     422, "the ops need 40000000000 bytes in all, the devices hold 32000000000 bytes in all"),
    ("string for a number", "POST", PLACE, _place(_op(time_ms="fast")), 422,
     "graph.ops[0] (id 'a').time_ms: Input should be a valid number"),
    ("ops not a list", "POST", PLACE, _place(_graph(ops={"a": 1})), 422, "graph.ops: Input should be a valid list"),
    ("graph is a list", "POST", PLACE, _place([1, 2]), 422, "graph: Input should be a valid dictionary"),
    ("hardware is a number", "POST", PLACE, _place(hardware=5), 422, "hardware: Input should be a valid dictionary"),
    ("op without a cost", "POST", PLACE, _place(_graph(ops=[{"id": "a"}], edges=[])), 422,
     "op 'a' has neither time_ms nor flops"),
    ("flops without peak_tflops", "POST", PLACE, _place(_graph(ops=[{"id": "a", "flops": 1e9}], edges=[])), 422,
     "op 'a' is costed by flops but device 'gpu0' has no peak_tflops"),
    ("unknown preset", "POST", PLACE, _place(hardware="dgx9"), 404, "hardware: no preset named 'dgx9' (presets: "),
    ("preset as a path", "POST", PLACE, _place(hardware="../../etc/passwd"), 422,
     "hardware: String should match pattern"),
    ("graph format version", "POST", PLACE, _place(_graph(format="placer.graph/v2")), 422,
     "graph.format: Input should be 'placer.graph/v1'"),
    ("hardware format version", "POST", PLACE, _place(hardware={**TWO_GPUS, "format": "placer.hardware/v0"}), 422,
     "hardware.format: Input should be 'placer.hardware/v1'"),
    ("empty graph", "POST", PLACE, _place(_graph(ops=[], edges=[])), 422,
     "graph.ops: List should have at least 1 item"),
    ("empty id", "POST", PLACE, _place(_graph(ops=[{"id": "", "time_ms": 1}], edges=[])), 422,
     "graph.ops[0] (id '').id: String should have at least 1 character"),
    ("pin to an unknown device", "POST", PLACE, _place(_op(device="gpu9")), 422,
     "op 'a': device 'gpu9' is not a device of hardware 'two-gpus' (devices: gpu0, gpu1)"),
    ("group pinned twice", "POST", PLACE, _place(_graph(ops=[
        {"id": "a", "time_ms": 1, "group": "g", "device": "gpu0"},
        {"id": "b", "time_ms": 1, "group": "g", "device": "gpu1"}], edges=[])), 422,
     "group 'g' pins its ops to different devices: ['gpu0', 'gpu1']"),
    ("disconnected hardware", "POST", PLACE, _place(hardware=HW_DISCONNECTED), 422,
     "hardware: devices 'g1' have no path of links to device 'g0'"),
    ("link to an unknown node", "POST", PLACE, _place(hardware={"devices": [{"id": "g0"}], "links": [
        {"a": "g0", "b": "x", "bandwidth_gb_per_s": 1}]}), 422, "hardware: links[0] (g0 - x): b names unknown node 'x'"),
    ("zero bandwidth", "POST", PLACE, _place(hardware={**TWO_GPUS, "links": [
        {"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 0}]}), 422,
     "hardware.links[0] (link gpu0 - gpu1).bandwidth_gb_per_s: Input should be greater than or equal to 0.000001"),
    ("duplicate device ids", "POST", PLACE, _place(hardware={"devices": [{"id": "g0"}, {"id": "g0"}]}), 422,
     "hardware: duplicate device/switch ids: 'g0'"),
    ("unknown solver", "POST", PLACE, _place(options={"solver": "gurobi"}), 422,
     "options.solver: Input should be 'cpsat', 'cbc', 'highs'"),
    ("time limit above the service's", "POST", PLACE, _place(options={"time_limit_s": 900}), 422,
     "options.time_limit_s: 900 s exceeds this service's maximum of 60 s (PLACER_MAX_TIME_LIMIT_S)"),
    ("negative time limit", "POST", PLACE, _place(options={"time_limit_s": -1}), 422,
     "options.time_limit_s: Input should be greater than 0"),
    ("too many threads", "POST", PLACE, _place(options={"threads": 64}), 422,
     "options.threads: 64 exceeds this service's maximum of 4"),
    ("unknown top-level field", "POST", PLACE, _place(colour="red"), 422, "colour: Extra inputs are not permitted"),
    ("unknown op field", "POST", PLACE, _place(_op(colour="red")), 422,
     "graph.ops[0] (id 'a').colour: Extra inputs are not permitted"),
    ("missing graph", "POST", PLACE, {"hardware": TWO_GPUS}, 422, "graph: Field required"),
    ("empty body", "POST", PLACE, b"", 422, "request body: Field required"),
    ("too many ops", "POST", PLACE, _place(_graph(ops=[{"id": f"o{i}", "time_ms": 1} for i in range(150)],
                                                  edges=[])),
     422, "graph.ops: 150 given, this service accepts at most 100 (PLACER_MAX_OPS)"),
    ("oversized body", "POST", PLACE, b'{"graph": "' + b"x" * 300_000 + b'"}', 413,
     "request body is larger than 200000 bytes (PLACER_MAX_BODY_BYTES)"),
    ("deep nesting", "POST", PLACE, b'{"graph": ' + b"[" * 10_000 + b"]" * 10_000 + b"}", 400,
     "request body: JSON nested deeper than 32 levels"),
    ("truncated JSON", "POST", PLACE, b'{"graph": {"ops": [', 400, "request body is not valid JSON: Expecting value"),
    ("form body", "POST", PLACE, ("a=1", "application/x-www-form-urlencoded"), 415,
     "Content-Type must be application/json, got 'application/x-www-form-urlencoded'"),
    ("simulate onto an unknown device", "POST", "/v1/simulations",
     _sim(placement={"a": "gpu7", "b": "gpu0", "c": "gpu0", "d": "gpu0"}), 422,
     "placement: op 'a' is placed on unknown device 'gpu7'"),
    ("simulate an op left out", "POST", "/v1/simulations", _sim(placement={"a": "gpu0"}), 422,
     "placement: op 'b' is not placed"),
    ("order names an unknown op", "POST", "/v1/simulations",
     _sim(placement=dict.fromkeys("abcd", "gpu0"), order={"gpu0": ["a", "zz"]}), 422,
     "order.gpu0[1]: unknown op 'zz'"),
    ("order against the edges", "POST", "/v1/simulations",
     _sim(placement=dict.fromkeys("abcd", "gpu0"), order={"gpu0": ["d", "c", "b", "a"]}), 422,
     "the per-device order contradicts the graph's dependencies"),
    ("placement and result", "POST", "/v1/simulations", _sim(placement={}, result={"status": "optimal",
                                                                                  "solver": "x"}), 422,
     "give exactly one of placement or result"),
    ("validate a bad status", "POST", "/v1/validations", _sim(result={"status": "great", "solver": "x"}), 422,
     "result.status: Input should be 'optimal', 'feasible', 'infeasible' or 'no_solution'"),
    ("unknown job", "GET", "/v1/jobs/0123abcd", None, 404, "job '0123abcd' does not exist"),
    ("malformed job id", "DELETE", "/v1/jobs/DROP%20TABLE", None, 422,
     "path parameter job_id: String should match pattern"),
    ("unknown preset document", "GET", "/v1/hardware-graphs/dgx9", None, 404, "hardware: no preset named 'dgx9'"),
    ("path traversal", "GET", "/v1/hardware-graphs/..%2F..%2Fetc%2Fpasswd", None, 404, "Not Found"),
    ("crossover devices out of order", "POST", "/v1/crossover",
     {"devices": [4, 2], "epochs": {"by_width": {"1": 1, "4": 2}}, "mp_speedup": {"2": 1.2}}, 422,
     "devices: must be strictly increasing, got 2 after 4 (devices[1])"),
    ("crossover reads no files", "POST", "/v1/crossover",
     {"devices": [1, 2], "epochs": {"by_width": {"1": 1, "2": 1}},
      "mp_speedup": {"engine": {"graph": "/etc/passwd", "hardware": "dgx1_v100", "m": [2]}}}, 422,
     "mp_speedup.engine.graph: file paths are not accepted here"),
    ("unknown route", "GET", "/v1/placement", None, 404, "Not Found"),
    ("wrong method", "PUT", PLACE, None, 405, "Method Not Allowed"),
]


@pytest.mark.parametrize(("name", "method", "path", "body", "status", "text"), CORPUS, ids=[c[0] for c in CORPUS])
def test_hostile_request_is_refused_precisely(client: httpx.Client, name: str, method: str, path: str, body: Any,
                                              status: int, text: str) -> None:
    if isinstance(body, bytes):
        reply = client.request(method, path, content=body, headers={"Content-Type": "application/json"})
    elif isinstance(body, tuple):
        reply = client.request(method, path, content=body[0].encode(), headers={"Content-Type": body[1]})
    elif body is None:
        reply = client.request(method, path)
    else:
        reply = client.request(method, path, json=body)
    assert reply.status_code == status, reply.text
    answer = reply.json()
    assert text in answer["detail"], answer["detail"]
    assert isinstance(answer["code"], str) and answer["code"]


def test_the_corpus_is_big_enough() -> None:
    assert len(CORPUS) >= 30


def test_the_service_is_healthy_after_the_corpus(service: ServiceProcess, client: httpx.Client) -> None:
    assert service.proc is not None and service.proc.poll() is None
    assert client.get("/healthz").json()["status"] == "ok"
    reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS})
    assert reply.status_code == 200 and reply.json()["makespan_ms"] == pytest.approx(DIAMOND_OPTIMUM_MS)
    assert 'status="500"' not in client.get("/metrics").text
