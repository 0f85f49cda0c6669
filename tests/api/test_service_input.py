"""Loose input, wrong status codes and the service's gates, through real HTTP on loopback:
numbers beyond their documented ranges, strict types, string lengths, repeated keys and lone
surrogates (each a 4xx naming the field), error codes of their own, the Host allow-list, the
API key (scheme case, failed-attempt limit) and the self-hosted /docs page."""
from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import DIAMOND, DIAMOND_OPTIMUM_MS, TWO_GPUS, ServiceProcess

HUGE = "1" + "0" * 400  # a valid JSON integer; Python reads it, a float cannot hold it
KEY = "s3cret-key"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("input"), workers=1, max_time_limit_s=60)
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def client(service: ServiceProcess) -> Iterator[httpx.Client]:
    with service.client() as c:
        yield c


def _post_raw(client: httpx.Client, path: str, body: str | bytes) -> httpx.Response:
    content = body.encode() if isinstance(body, str) else body
    return client.post(path, content=content, headers={"Content-Type": "application/json"})


# ------------------------------------------------------------------ numbers beyond any range

FULL_REQUEST: dict[str, Any] = {
    "graph": {"name": "full", "ops": [
        {"id": "a", "time_ms": 1.0, "memory_bytes": 1000},
        {"id": "b", "flops": 1e9, "bytes_accessed": 1e6, "memory_bytes": 1000}],
        "edges": [{"src": "a", "dst": "b", "bytes": 1000}]},
    "hardware": {"devices": [{"id": "gpu0", "memory_bytes": 10**10, "peak_tflops": 10.0,
                              "memory_bandwidth_gb_per_s": 500.0, "efficiency": 0.5},
                             {"id": "gpu1", "memory_bytes": 10**10, "peak_tflops": 10.0,
                              "memory_bandwidth_gb_per_s": 500.0}],
                 "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0}]},
    "options": {"time_limit_s": 5, "relative_gap": 0.0, "threads": 1, "seed": 1, "coarsen_max_ops": 100},
}


def _number_paths(node: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _number_paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _number_paths(v, (*path, i))
    elif isinstance(node, (int, float)) and not isinstance(node, bool):
        yield path


NUMBER_PATHS = list(_number_paths(FULL_REQUEST))


def test_the_full_request_is_valid(client: httpx.Client) -> None:
    reply = client.post("/v1/placements", json=FULL_REQUEST)
    assert reply.status_code == 200, reply.text


def test_every_number_field_is_covered() -> None:
    assert len(NUMBER_PATHS) >= 20


@pytest.mark.parametrize("path", NUMBER_PATHS, ids=lambda p: ".".join(map(str, p)))
@pytest.mark.parametrize("value", [HUGE, "-" + HUGE, "1e308"], ids=["1e400", "-1e400", "1e308"])
def test_a_number_beyond_its_range_is_a_422_naming_the_field(client: httpx.Client, path: tuple[Any, ...],
                                                             value: str) -> None:
    body = copy.deepcopy(FULL_REQUEST)
    node = body
    for part in path[:-1]:
        node = node[part]
    node[path[-1]] = "@NUMBER@"
    reply = _post_raw(client, "/v1/placements", json.dumps(body).replace('"@NUMBER@"', value))
    assert reply.status_code == 422, reply.text
    detail = reply.json()["detail"]
    assert f".{path[-1]}: " in detail or detail.startswith(f"{path[-1]}") or f"{path[-2]}.{path[-1]}" in detail, \
        detail
    assert reply.json()["code"] in ("invalid_request", "limit_exceeded")


def test_an_edge_of_1e400_bytes_names_the_edge(client: httpx.Client) -> None:
    text = json.dumps({"graph": DIAMOND, "hardware": TWO_GPUS}).replace('"bytes": 25000000}]', f'"bytes": {HUGE}}}]')
    reply = _post_raw(client, "/v1/placements", text)
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"] == ("graph.edges[3] (edge c -> d).bytes: Input should be less than or equal to "
                                      "1000000000000000")


@pytest.mark.parametrize("solver", ["cpsat", "cbc", "highs"])
def test_numbers_at_their_documented_limits_are_solved(client: httpx.Client, solver: str) -> None:
    graph = {"ops": [{"id": "a", "time_ms": 1e9, "memory_bytes": 10**15}, {"id": "b", "time_ms": 0.001},
                     {"id": "c", "flops": 1e24, "bytes_accessed": 1e24}],
             "edges": [{"src": "a", "dst": "b", "bytes": 10**15}, {"src": "b", "dst": "c", "bytes": 1}]}
    hardware = {"devices": [{"id": "g0", "memory_bytes": 10**15, "peak_tflops": 1e6, "memory_bandwidth_gb_per_s": 1e6},
                            {"id": "g1", "memory_bytes": 10**15, "peak_tflops": 1e-6,
                             "memory_bandwidth_gb_per_s": 1e-6, "efficiency": 0.001}],
                "links": [{"a": "g0", "b": "g1", "bandwidth_gb_per_s": 1e-6, "latency_us": 1e9}]}
    reply = client.post("/v1/placements", json={"graph": graph, "hardware": hardware,
                                                "options": {"solver": solver, "time_limit_s": 10}})
    assert reply.status_code == 200, reply.text
    assert reply.json()["status"] in ("optimal", "feasible")


# ------------------------------------------------------------------ strict types and lengths

def _place(**options: Any) -> dict[str, Any]:
    return {"graph": DIAMOND, "hardware": TWO_GPUS, "options": options}


def _graph_with(**op_fields: Any) -> dict[str, Any]:
    return {"graph": {"ops": [{"id": "a", "time_ms": 1.0, **op_fields}]}, "hardware": TWO_GPUS}


STRICT_CASES: list[tuple[str, str, Any, str]] = [
    ("time limit as a string", "/v1/placements", _place(time_limit_s="10"),
     "options.time_limit_s: Input should be a valid number"),
    ("async as a string", "/v1/placements", _place(**{"async": "yes"}), "options.async: Input should be a valid boolean"),
    ("async as a number", "/v1/placements", _place(**{"async": 1}), "options.async: Input should be a valid boolean"),
    ("threads as a float", "/v1/placements", _place(threads=1.0), "options.threads: Input should be a valid integer"),
    ("solver as a number", "/v1/placements", _place(solver=1), "options.solver: Input should be 'cpsat'"),
    ("memory as a string", "/v1/placements", _graph_with(memory_bytes="5"),
     "graph.ops[0] (id 'a').memory_bytes: Input should be a valid integer"),
    ("memory as a float", "/v1/placements", _graph_with(memory_bytes=5.0),
     "graph.ops[0] (id 'a').memory_bytes: Input should be a valid integer"),
    ("time as a boolean", "/v1/placements", _graph_with(time_ms=True),
     "graph.ops[0] (id 'a').time_ms: Input should be a valid number"),
    ("id as a number", "/v1/placements", {"graph": {"ops": [{"id": 7, "time_ms": 1}]}, "hardware": TWO_GPUS},
     "graph.ops[0] (id '7').id: Input should be a valid string"),
    ("contention as a string", "/v1/simulations",
     {"graph": DIAMOND, "hardware": TWO_GPUS, "placement": dict.fromkeys("abcd", "gpu0"), "contention": "true"},
     "contention: Input should be a valid boolean"),
    ("crossover devices as strings", "/v1/crossover",
     {"devices": ["1", 2], "epochs": {"by_width": {"1": 1, "2": 1}}, "mp_speedup": {"2": 1.2}},
     "devices[0]: Input should be a valid integer"),
    ("crossover speedup as a string", "/v1/crossover",
     {"devices": [1, 2], "epochs": {"by_width": {"1": 1, "2": 1}}, "mp_speedup": {"2": "1.2"}},
     "mp_speedup.given.2: Input should be a valid number"),
    ("graph name of 2 MB", "/v1/placements", {"graph": {**DIAMOND, "name": "n" * 2_000_000}, "hardware": TWO_GPUS},
     "graph.name: String should have at most 1024 characters"),
    ("op kind of 2 MB", "/v1/placements", _graph_with(kind="k" * 2_000_000),
     "graph.ops[0] (id 'a').kind: String should have at most 256 characters"),
    ("device kind too long", "/v1/placements",
     {"graph": DIAMOND, "hardware": {**TWO_GPUS, "devices": [{"id": "gpu0", "kind": "k" * 257}, {"id": "gpu1"}]}},
     "hardware.devices[0] (id 'gpu0').kind: String should have at most 256 characters"),
    ("op id too long", "/v1/placements", {"graph": {"ops": [{"id": "i" * 257, "time_ms": 1}]}, "hardware": TWO_GPUS},
     ".id: String should have at most 256 characters"),
    ("hardware description too long", "/v1/placements",
     {"graph": DIAMOND, "hardware": {**TWO_GPUS, "description": "d" * 4097}},
     "hardware.description: String should have at most 4096 characters"),
    ("placement key too long", "/v1/simulations",
     {"graph": DIAMOND, "hardware": TWO_GPUS, "placement": {"o" * 257: "gpu0"}},
     "String should have at most 256 characters"),
]


@pytest.mark.parametrize(("name", "path", "body", "text"), STRICT_CASES, ids=[c[0] for c in STRICT_CASES])
def test_no_coercion_and_bounded_strings(client: httpx.Client, name: str, path: str, body: Any, text: str) -> None:
    reply = client.post(path, json=body)
    assert reply.status_code == 422, reply.text
    assert text in reply.json()["detail"], reply.json()["detail"]


def test_ints_are_still_numbers(client: httpx.Client) -> None:
    reply = client.post("/v1/placements", json=_place(time_limit_s=5, relative_gap=0))
    assert reply.status_code == 200, reply.text
    assert reply.json()["makespan_ms"] == pytest.approx(DIAMOND_OPTIMUM_MS)


# ------------------------------------------------------------------ JSON Python reads wrongly

SURROGATE_CASES = [
    ("op id", b'{"graph": {"ops": [{"id": "a\\ud800", "time_ms": 1}]}, "hardware": "dgx1_v100"}',
     "request body: graph.ops[0].id: text is not valid Unicode"),
    ("graph name", b'{"graph": {"name": "\\udfff", "ops": [{"id": "a", "time_ms": 1}]}, "hardware": "dgx1_v100"}',
     "request body: graph.name: text is not valid Unicode"),
    ("preset name", b'{"graph": {"ops": [{"id": "a", "time_ms": 1}]}, "hardware": "dgx\\ud800"}',
     "request body: hardware: text is not valid Unicode"),
    ("placement key", (b'{"graph": {"ops": [{"id": "a", "time_ms": 1}]}, "hardware": "dgx1_v100", '
                      b'"placement": {"a\\udc00": "gpu0"}}'),
     "request body: placement: key 'a\\udc00' is not valid Unicode"),
]


@pytest.mark.parametrize(("name", "body", "text"), SURROGATE_CASES, ids=[c[0] for c in SURROGATE_CASES])
def test_a_lone_surrogate_is_a_422_and_the_connection_lives_on(service: ServiceProcess, name: str, body: bytes,
                                                              text: str) -> None:
    with service.client() as c:
        path = "/v1/simulations" if b"placement" in body else "/v1/placements"
        reply = _post_raw(c, path, body)
        assert reply.status_code == 422, reply.text
        assert reply.json()["code"] == "invalid_text" and text in reply.json()["detail"], reply.text
        again = c.get("/healthz")  # the same keep-alive connection still answers
        assert again.status_code == 200
        assert reply.extensions["network_stream"] is again.extensions["network_stream"]


DUPLICATE_CASES = [
    ("top level", b'{"graph": {"ops": [{"id": "a", "time_ms": 1}]}, "hardware": "dgx1_v100", "hardware": "x"}',
     "request body: the top-level object: key 'hardware' given more than once"),
    ("op field", b'{"graph": {"ops": [{"id": "a", "time_ms": 1, "time_ms": 9}]}, "hardware": "dgx1_v100"}',
     "request body: graph.ops[0]: key 'time_ms' given more than once"),
    ("options", (b'{"graph": {"ops": [{"id": "a", "time_ms": 1}]}, "hardware": "dgx1_v100", '
                b'"options": {"solver": "cbc", "solver": "cpsat"}}'),
     "request body: options: key 'solver' given more than once"),
]


@pytest.mark.parametrize(("name", "body", "text"), DUPLICATE_CASES, ids=[c[0] for c in DUPLICATE_CASES])
def test_a_repeated_key_is_refused_naming_it(client: httpx.Client, name: str, body: bytes, text: str) -> None:
    reply = _post_raw(client, "/v1/placements", body)
    assert reply.status_code == 422, reply.text
    assert reply.json() == {"detail": text + " (JSON objects must not repeat a key)", "code": "duplicate_key"}


# ------------------------------------------------------------------ codes and messages of their own

def test_an_unknown_zoo_model_has_its_own_code(client: httpx.Client) -> None:
    reply = client.get("/v1/models/resnet51")
    assert reply.status_code == 404
    assert reply.json()["code"] == "unknown_model" and "zoo model 'resnet51' does not exist" in reply.json()["detail"]
    assert client.post("/v1/placements", json={"graph": DIAMOND, "hardware": "dgx9"}).json()["code"] == "unknown_preset"


def _result_with_a_ghost_op() -> dict[str, Any]:
    rows = [("a", 0, 1), ("b", 1, 5), ("c", 5, 9), ("d", 9, 10), ("zz", 2, 3)]
    return {"status": "feasible", "solver": "manual", "makespan_ms": 10.0, "placement": dict.fromkeys("abcd", "gpu0"),
            "schedule": [{"op": o, "device": "gpu0", "start_ms": s, "end_ms": e} for o, s, e in rows]}


def test_a_schedule_naming_an_unknown_op_is_said_so(client: httpx.Client) -> None:
    reply = client.post("/v1/validations", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                 "result": _result_with_a_ghost_op()})
    assert reply.status_code == 200, reply.text
    assert reply.json()["violations"] == ["schedule[4] names unknown op 'zz'"]
    reply = client.post("/v1/simulations", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                 "result": _result_with_a_ghost_op()})
    assert reply.status_code == 422
    assert reply.json()["detail"] == "result.schedule[4]: unknown op 'zz' (not an op of graph 'diamond')"


# ------------------------------------------------------------------ Host allow-list

def test_a_foreign_host_name_is_refused(service: ServiceProcess, client: httpx.Client) -> None:
    for host in ("evil.example", f"evil.example:{service.port}", "127.0.0.1.nip.io"):
        reply = client.get("/healthz", headers={"Host": host})
        assert reply.status_code == 421, host
        assert reply.json()["code"] == "host_not_allowed" and "PLACER_ALLOWED_HOSTS" in reply.json()["detail"]
    reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS},
                        headers={"Host": "rebound.example"})
    assert reply.status_code == 421
    for host in (f"localhost:{service.port}", f"127.0.0.1:{service.port}", "LOCALHOST", f"[::1]:{service.port}"):
        assert client.get("/healthz", headers={"Host": host}).status_code == 200, host


# ------------------------------------------------------------------ the key, the limiter, the docs

@pytest.fixture(scope="module")
def locked(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("locked"), workers=1, api_key=KEY, allowed_hosts="placer.lan")
    svc.start()
    yield svc
    svc.stop()


def test_the_bearer_scheme_is_case_insensitive(locked: ServiceProcess) -> None:
    with locked.client() as c:
        for scheme in ("Bearer", "bearer", "BEARER", "bEaReR"):
            reply = c.get("/v1/hardware-graphs", headers={"Authorization": f"{scheme} {KEY}"})
            assert reply.status_code == 200, scheme
        assert c.get("/v1/hardware-graphs", headers={"Authorization": f"Bearer  {KEY}"}).status_code == 200
        assert c.get("/v1/hardware-graphs", headers={"Authorization": f"Basic {KEY}"}).status_code == 401


def test_an_allowed_host_name_is_accepted(locked: ServiceProcess) -> None:
    with locked.client() as c:
        assert c.get("/healthz", headers={"Host": f"placer.lan:{locked.port}"}).status_code == 200
        assert c.get("/healthz", headers={"Host": "other.lan"}).status_code == 421


def test_docs_load_from_the_package_without_the_key(locked: ServiceProcess) -> None:
    with locked.client() as c:
        page = c.get("/docs")
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
        assert "/static/swagger-ui/swagger-ui-bundle.js" in assets and "/static/swagger-ui/swagger-ui.css" in assets
        assert "http://" not in page.text and "https://" not in page.text  # nothing from a CDN
        assert '"validatorUrl": null' in page.text
        for asset in assets:
            reply = c.get(asset)
            assert reply.status_code == 200 and len(reply.content) > 500, asset
        assert "SwaggerUIBundle" in c.get("/static/swagger-ui/swagger-ui-bundle.js").text
        schema = c.get("/openapi.json")
        assert schema.status_code == 200 and schema.json()["components"]["securitySchemes"]["bearer"]
        assert c.get("/redoc").status_code in (401, 404)  # the CDN-loading ReDoc page is gone
        assert c.get("/v1/hardware-graphs").status_code == 401  # data still needs the key


def test_failed_keys_are_limited_per_address(tmp_path: Path) -> None:
    svc = ServiceProcess(tmp_path, workers=1, api_key=KEY, auth_failure_burst=3, auth_failure_refill_s=3600).start()
    try:
        _lock_out(svc)
    finally:
        svc.stop()


def _lock_out(svc: ServiceProcess) -> None:
    with svc.client() as c:
        for _ in range(3):
            assert c.get("/v1/models", headers={"Authorization": "Bearer guess"}).status_code == 401
        reply = c.get("/v1/models", headers={"Authorization": "Bearer guess"})
        assert reply.status_code == 429 and reply.json()["code"] == "too_many_attempts"
        assert 3000 < int(reply.headers["retry-after"]) <= 3600
        # locked out: even the right key gets 429 (a guess must not learn that it was right) ...
        assert c.get("/v1/models", headers={"Authorization": f"Bearer {KEY}"}).status_code == 429
        # ... while what needs no key still answers
        assert c.get("/healthz").status_code == 200 and c.get("/docs").status_code == 200


@pytest.mark.parametrize(("options", "field"), [({"ray": True}, "options.ray"), ({"workers": 2}, "options.workers"),
                                                 ({"ray_address": "10.0.0.1:6379"}, "options.ray_address")])
def test_sub_solves_elsewhere_need_a_service_on_a_cluster(client: httpx.Client, options: dict[str, Any],
                                                           field: str) -> None:
    """A local service refuses `ray` and several workers; no client picks a cluster address."""
    reply = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS, "options": options})
    assert reply.status_code == 422, reply.text
    assert reply.json()["detail"].startswith(field), reply.json()
