"""Split plans through real HTTP: `"split": true` reaches the engine, synchronously and as a job,
and the answer carries `splits`, task entries, collectives and the data-parallel baseline."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from service_helpers import ServiceProcess, wait_for_job

from placer.schema import parse_graph, parse_hardware, parse_result
from placer.validate import check_result

ROOT = Path(__file__).resolve().parents[2]
MLP = json.loads((ROOT / "examples" / "mlp_split.json").read_text())
TWO = json.loads((ROOT / "examples" / "two_gpus_10gbs.json").read_text())
OPTIONS = {"split": True, "threads": 1, "time_limit_s": 20}


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    with ServiceProcess(tmp_path_factory.mktemp("split"), workers=1, queue_size=4) as svc, svc.client() as c:
        yield c


def _check(doc: dict) -> None:
    assert doc["status"] == "optimal"
    assert doc["makespan_ms"] == pytest.approx(15.535)
    assert doc["baselines"]["data_parallel_ms"] == pytest.approx(18.03)
    assert doc["splits"]["fc1"]["dim"] == "channel"
    assert doc["collectives"] and doc["collectives"][0]["participants"] == ["gpu0", "gpu1"]
    assert check_result(parse_graph(MLP), parse_hardware(TWO), parse_result(doc)) == []


def test_split_placement_over_http(client: httpx.Client) -> None:
    r = client.post("/v1/placements", json={"graph": MLP, "hardware": TWO, "options": OPTIONS})
    assert r.status_code == 200, r.text
    _check(r.json())


def test_split_placement_as_a_job(client: httpx.Client) -> None:
    r = client.post("/v1/placements", json={"graph": MLP, "hardware": TWO, "options": {**OPTIONS, "async": True}})
    assert r.status_code == 202, r.text
    job = wait_for_job(client, r.json()["job_id"])
    _check(job["result"])


def test_split_with_a_milp_solver_is_a_4xx_naming_the_option(client: httpx.Client) -> None:
    r = client.post("/v1/placements", json={"graph": MLP, "hardware": TWO,
                                            "options": {"split": True, "solver": "cbc"}})
    assert 400 <= r.status_code < 500
    assert "split" in r.text and "cbc" in r.text


def test_a_split_result_replays_over_http(client: httpx.Client) -> None:
    result = client.post("/v1/placements", json={"graph": MLP, "hardware": TWO, "options": OPTIONS}).json()
    r = client.post("/v1/simulations", json={"graph": MLP, "hardware": TWO, "result": result, "contention": True})
    assert r.status_code == 200, r.text
    assert r.json()["makespan_ms"] == pytest.approx(15.535)
    assert any(e["op"] == "fc1#1" for e in r.json()["schedule"])
    broken = dict(result, collectives=[])
    bad = client.post("/v1/simulations", json={"graph": MLP, "hardware": TWO, "result": broken})
    assert 400 <= bad.status_code < 500 and "all-reduce" in bad.text
