"""A few malformed requests of the hostile campaign (benchmarks/hostile.py) through its own path,
against a real `placer serve`: each gets its 4xx, never a 5xx or a reset connection.

The campaign itself (about 300 requests, heavy requests, faults, latency) is not part of the
suite; this keeps its client, its cases and its judge working. No timing is asserted.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.hostile import run_case
from benchmarks.hostile_cases import Case, judge, malformed_cases
from benchmarks.hostile_http import Service, send
from benchmarks.hostile_report import write_report

KEY = "smoke-test-key"

# Cases the service answers right today (the campaign's report lists the ones it does not).
SMOKE = [
    "place.json-truncated", "place.json-array", "place.nan", "place.deep-100k", "place.unknown-field",
    "place.missing-graph", "place.ctype-text", "place.utf8-invalid", "place.body-over-limit",
    "place.graph.edge-unknown-src", "place.graph.cycle", "place.graph.pin-unknown-device",
    "place.hw.preset-unknown", "sim.placement-unknown-op", "val.status-unknown", "xo.devices-decreasing",
    "job.not-hex", "job.unknown", "auth.wrong-key", "models.batch-zero",
]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    workdir = tmp_path_factory.mktemp("hostile")
    svc = Service(workdir, {"db_path": str(workdir / "jobs.sqlite3"), "workers": 1, "api_key": KEY})
    svc.start()
    yield svc
    svc.kill()


@pytest.fixture(scope="module")
def cases() -> dict[str, Case]:
    return {c.id: c for c in malformed_cases(api_key=KEY)}


def test_malformed_requests_get_their_4xx(service: Service, cases: dict[str, Case]) -> None:
    rows = [run_case(service.port, cases[cid], KEY, timed=False) for cid in SMOKE]
    for row in rows:
        assert row["error"] is None, row
        assert 400 <= row["status"] < 500, row
        assert row["keepalive"] != "broken", row
        assert row["verdict"] == "pass", row
    assert {r["status"] for r in rows} >= {400, 401, 404, 413, 415, 422}


def test_every_endpoint_of_the_openapi_document_has_cases(service: Service, cases: dict[str, Case]) -> None:
    reply = send(service.port, "GET", "/openapi.json", headers={"authorization": f"Bearer {KEY}"},
                 check_keepalive=False)
    endpoints = {f"{m.upper()} {p}" for p, ops in reply.json()["paths"].items() for m in ops}
    covered = {c.endpoint for c in cases.values()}
    assert endpoints and endpoints <= covered, endpoints - covered
    assert len(cases) >= 150


def test_the_judge_fails_server_errors_resets_and_slow_refusals() -> None:
    case = Case("x", "POST /v1/placements", "x", "POST", "/v1/placements", fast=True)
    assert judge(case, 422, None, 0.1, {"detail": "d", "code": "c"}, "ok") == []
    assert judge(case, 500, None, 0.1, {}, "ok") == ["server error 500"]
    assert judge(case, None, "reset", 0.1, None, None) == ["no answer: reset"]
    assert judge(case, 200, None, 0.1, {}, "ok") == ["expected 4xx, got 200"]
    assert judge(case, 413, None, 2.5, {}, "broken")[0].startswith("over a documented limit")
    lowercase = Case("y", "GET /v1/hardware-graphs", "y", "GET", "/", expect="2xx")
    assert judge(lowercase, 401, None, 0.1, {}, "ok") == ["expected 2xx, got 401"]


def test_the_report_counts_failures(tmp_path: Path) -> None:
    rows = [{"kind": "request", "phase": "malformed", "id": f"c{i}", "endpoint": "GET /healthz", "what": "w",
             "bytes": 0, "expect": "4xx", "status": status, "error": None, "code": None, "detail": "",
             "ms": 1.0, "keepalive": "ok", "verdict": verdict, "problems": problems}
            for i, (status, verdict, problems) in enumerate([(404, "pass", []), (500, "fail", ["server error 500"])])]
    rows.append({"kind": "fault", "fault": "f", "check": "c", "pass": False, "observed": "o"})
    assert write_report(tmp_path, rows, {"endpoints": ["GET /healthz"]}) == 2
    text = (tmp_path / "report.md").read_text()
    assert "zero 5xx: 1 | **FAIL**" in text and "server error 500" in text
