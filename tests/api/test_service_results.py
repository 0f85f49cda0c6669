"""Results through real HTTP: OpenAPI describes the result people get, the contention option
reaches it, and replaying a result over HTTP gives what `placer simulate` gives, routes included."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from service_helpers import DIAMOND, TWO_GPUS, ServiceProcess

from placer.cli import main
from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with ServiceProcess(tmp_path_factory.mktemp("results"), workers=1, queue_size=4) as svc, svc.client() as c:
        yield c


def test_openapi_describes_the_result_fields(client: httpx.Client) -> None:
    spec = client.get("/openapi.json").json()
    schemas = spec["components"]["schemas"]
    result = next(v for k, v in schemas.items() if k.startswith("ResultSpec"))
    for name in ("baselines", "simulation", "stats", "routing", "stopped_by"):
        assert name in result["properties"], name
    stats = next(v for k, v in schemas.items() if k.startswith("SolveStats"))["properties"]
    assert {"best_from", "solver_status", "decomposition_components", "neighbourhood_steps"} <= set(stats)
    simulation = next(v for k, v in schemas.items() if k.startswith("SimulationSummary"))["properties"]
    assert {"makespan_ms", "contention_makespan_ms", "contention", "device_utilisation"} <= set(simulation)


def test_the_contention_option_reaches_the_result(client: httpx.Client) -> None:
    body = {"graph": DIAMOND, "hardware": TWO_GPUS, "options": {"contention": True}}
    result = client.post("/v1/placements", json=body).json()
    assert result["simulation"]["contention"] is True
    plain = client.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS}).json()
    assert plain["simulation"]["contention"] is False and plain["stats"]["ops"] == 4


# gpu0 and gpu1 share a direct link and a detour through gpu2. a (gpu0) feeds b (gpu1), which
# also waits 10 ms for c: the transfer has slack for either route, so a flow-routed answer may
# take the detour. The simulator alone would take the direct link.
TRIANGLE: dict[str, Any] = {
    "format": "placer.hardware/v1", "name": "triangle",
    "devices": [{"id": "gpu0"}, {"id": "gpu1"}, {"id": "gpu2"}],
    "links": [{"a": "gpu0", "b": "gpu1", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0},
              {"a": "gpu0", "b": "gpu2", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0},
              {"a": "gpu2", "b": "gpu1", "bandwidth_gb_per_s": 25.0, "latency_us": 5.0}],
}
SLACK: dict[str, Any] = {
    "format": "placer.graph/v1", "name": "slack",
    "ops": [{"id": "a", "time_ms": 1.0, "device": "gpu0"}, {"id": "c", "time_ms": 10.0, "device": "gpu1"},
            {"id": "b", "time_ms": 1.0, "device": "gpu1"}],
    "edges": [{"src": "a", "dst": "b", "bytes": 25_000_000}, {"src": "c", "dst": "b", "bytes": 0}],
}
DETOUR = ["gpu0", "gpu2", "gpu1"]


def test_an_http_replay_of_a_flow_routed_result_equals_the_cli_replay(client: httpx.Client, tmp_path: Path) -> None:
    files = {name: tmp_path / f"{name}.json" for name in ("graph", "hw", "result", "cli")}
    files["graph"].write_text(json.dumps(SLACK))
    files["hw"].write_text(json.dumps(TRIANGLE))
    assert main(["solve", str(files["graph"]), "--hardware", str(files["hw"]), "--solver", "highs", "--routing",
                 "flow", "-o", str(files["result"]), "-q", "--threads", "1"]) == 0
    result = json.loads(files["result"].read_text())
    assert result["routing"] == "flow" and result["makespan_ms"] == pytest.approx(11.0)
    # whichever route the solver took, make it the detour (2 hops of 1.005 ms, inside the slack)
    transfer = result["transfers"][0]
    transfer["route"], transfer["end_ms"] = DETOUR, transfer["start_ms"] + 2 * 1.005
    assert check_result(parse_graph(SLACK), parse_hardware(TRIANGLE), parse_result(result)) == []
    files["result"].write_text(json.dumps(result))

    assert main(["simulate", str(files["graph"]), "--hardware", str(files["hw"]), "--placement",
                 str(files["result"]), "-o", str(files["cli"])]) == 0
    cli = json.loads(files["cli"].read_text())
    reply = client.post("/v1/simulations", json={"graph": SLACK, "hardware": TRIANGLE, "result": result})
    assert reply.status_code == 200, reply.text
    assert reply.json() == cli
    assert cli["transfers"][0]["route"] == DETOUR
    assert cli["link_bytes"] == {"gpu0->gpu2": 25_000_000, "gpu2->gpu1": 25_000_000}
    # the placement alone (no routes) replays over the direct link: the routes are what differ
    alone = client.post("/v1/simulations", json={"graph": SLACK, "hardware": TRIANGLE,
                                                 "placement": result["placement"]}).json()
    assert alone["link_bytes"] == {"gpu0->gpu1": 25_000_000}


def test_a_result_whose_route_leaves_the_links_is_refused(client: httpx.Client) -> None:
    result = client.post("/v1/placements", json={"graph": SLACK, "hardware": TRIANGLE}).json()
    result["transfers"][0]["route"] = ["gpu0", "gpu2", "gpu0"]  # ends where it began
    reply = client.post("/v1/simulations", json={"graph": SLACK, "hardware": TRIANGLE, "result": result})
    assert reply.status_code == 422
    assert "route of edge a -> b" in reply.json()["detail"]
