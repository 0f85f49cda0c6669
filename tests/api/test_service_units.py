"""Pieces of the service that need no server: API key, error table, metrics text, JSON logs."""
from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from api.errors import LimitExceededError, QueueFullError, http_status
from api.logs import JsonFormatter, request_id_var
from api.main import create_app
from api.metrics import Counter, Histogram, Registry
from api.middleware import allowed_hosts, host_allowed
from api.ratelimit import FailureLimiter
from api.settings import Settings
from placer.errors import InputError, InvalidGraphError, SolutionCheckError, UnknownPresetError


@pytest.fixture()
def locked(tmp_path: Path) -> TestClient:
    # no `with`: the lifespan (worker processes) is not needed to check the gate
    return TestClient(create_app(Settings(db_path=tmp_path / "j.sqlite3", api_key="s3cret", auth_failure_burst=100)),
                      base_url="http://127.0.0.1")


def test_every_endpoint_but_healthz_and_docs_needs_the_key(locked: TestClient) -> None:
    assert locked.get("/healthz").status_code == 200
    for method, path in [("GET", "/v1/hardware-graphs"), ("GET", "/metrics"),
                         ("GET", "/v1/jobs/abc"), ("DELETE", "/v1/jobs/abc"), ("POST", "/v1/placements"),
                         ("POST", "/v1/simulations"), ("POST", "/v1/crossover"), ("GET", "/v1/models")]:
        reply = locked.request(method, path)
        assert reply.status_code == 401, (method, path)
        assert reply.headers["www-authenticate"] == "Bearer"
        assert reply.json() == {"detail": "missing or wrong API key: send the header 'Authorization: Bearer <key>'",
                                "code": "unauthorized"}
    assert locked.get("/v1/hardware-graphs", headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert locked.get("/v1/hardware-graphs", headers={"Authorization": "s3cret"}).status_code == 401
    ok = locked.get("/v1/hardware-graphs", headers={"Authorization": "Bearer s3cret"})
    assert ok.status_code == 200 and ok.json()
    schema = locked.get("/openapi.json").json()
    assert schema["components"]["securitySchemes"]["bearer"]["scheme"] == "bearer"


def test_the_key_is_checked_before_the_body_is_read(locked: TestClient) -> None:
    reply = locked.post("/v1/placements", content=b"x" * 20_000_000, headers={"Content-Type": "application/json"})
    assert reply.status_code == 401


def test_settings_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLACER_WORKERS", "3")
    monkeypatch.setenv("PLACER_PORT", "9001")
    monkeypatch.setenv("PLACER_API_KEY", "hunter2")
    monkeypatch.setenv("PLACER_MAX_OPS", "10")
    settings = Settings()
    assert (settings.workers, settings.port, settings.max_ops) == (3, 9001, 10)
    assert settings.api_key is not None and settings.api_key.get_secret_value() == "hunter2"
    assert "hunter2" not in repr(settings)


def test_the_error_table_walks_the_mro() -> None:
    assert http_status(UnknownPresetError("x")) == 404  # an InputError, but more specific
    assert http_status(InvalidGraphError("x")) == 422
    assert http_status(InputError("x")) == 422
    assert http_status(LimitExceededError("x")) == 422
    assert http_status(SolutionCheckError("x")) == 500
    assert http_status(QueueFullError("x", 5)) == 503
    assert http_status(KeyError("x")) == 500


def test_metrics_text_format() -> None:
    registry = Registry()
    requests = registry.add(Counter("t_requests_total", "requests", ("route", "status")))
    seconds = registry.add(Histogram("t_seconds", "time", (0.1, 1.0), ("route",)))
    requests.inc("/a", "200")
    requests.inc("/a", "200")
    requests.inc('/b"x', "503")
    seconds.observe(0.05, "/a")
    seconds.observe(0.5, "/a")
    seconds.observe(5.0, "/a")
    assert registry.render() == "\n".join([  # noqa: FLY002
        "# HELP t_requests_total requests",
        "# TYPE t_requests_total counter",
        't_requests_total{route="/a",status="200"} 2',
        't_requests_total{route="/b\\"x",status="503"} 1',
        "# HELP t_seconds time",
        "# TYPE t_seconds histogram",
        't_seconds_bucket{route="/a",le="0.1"} 1',
        't_seconds_bucket{route="/a",le="1"} 2',
        't_seconds_bucket{route="/a",le="+Inf"} 3',
        't_seconds_sum{route="/a"} 5.55',
        't_seconds_count{route="/a"} 3',
    ]) + "\n"
    with pytest.raises(ValueError, match="expected labels"):
        requests.inc("/a")


def test_json_logs_carry_the_request_id() -> None:
    record = logging.LogRecord("api.access", logging.INFO, __file__, 1, "request %s", ("done",), None)
    record.status = 200
    token = request_id_var.set("abc123")
    try:
        doc = json.loads(JsonFormatter().format(record))
    finally:
        request_id_var.reset(token)
    assert doc["msg"] == "request done" and doc["request_id"] == "abc123" and doc["status"] == 200
    assert doc["level"] == "info" and doc["logger"] == "api.access" and doc["ts"].endswith("Z")


def test_host_allow_list() -> None:
    default = allowed_hosts(Settings(host="127.0.0.1"))
    for host in ("127.0.0.1:8000", "localhost", "LOCALHOST:1", "[::1]:8000", "127.0.0.2", "localhost."):
        assert host_allowed(host, default), host
    for host in ("evil.example:8000", "10.0.0.1", "localhost.evil.example", "[::2]", ""):
        assert not host_allowed(host, default), host
    named = allowed_hosts(Settings(host="0.0.0.0", allowed_hosts="placer.lan, Box:80"))
    assert host_allowed("placer.lan:8000", named) and host_allowed("box", named)
    assert not host_allowed("0.0.0.0", named)  # a wildcard bind is not a name
    assert allowed_hosts(Settings(allowed_hosts="*")) is None and host_allowed("anything", None)


def test_failure_limiter_is_a_token_bucket_per_address() -> None:
    now = [0.0]
    limiter = FailureLimiter(burst=2, refill_s=10.0, max_addresses=2, clock=lambda: now[0])
    limiter.failed("a")
    assert limiter.retry_after_s("a") == 0
    limiter.failed("a")
    assert limiter.retry_after_s("a") == 10 and limiter.retry_after_s("b") == 0
    now[0] = 4.0
    assert limiter.retry_after_s("a") == 6
    now[0] = 10.0
    assert limiter.retry_after_s("a") == 0  # one attempt came back
    limiter.failed("b")
    limiter.failed("c")  # a third address evicts the oldest
    assert set(limiter._buckets) == {"b", "c"}


def test_a_store_written_before_the_worker_column_opens_and_takes_it(tmp_path: Path) -> None:
    """Jobs stores of earlier releases lack `worker`: opening one adds the column, keeps the rows."""
    import sqlite3

    from api.store import JobStore

    path = tmp_path / "old.sqlite3"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE jobs (id TEXT PRIMARY KEY, kind TEXT NOT NULL, state TEXT NOT NULL, "
                     "request TEXT NOT NULL, summary TEXT NOT NULL, progress TEXT, result TEXT, error TEXT, "
                     "created_at REAL NOT NULL, started_at REAL, finished_at REAL, "
                     "interruptions INTEGER NOT NULL DEFAULT 0)")
        conn.execute("INSERT INTO jobs (id, kind, state, request, summary, created_at) "
                     "VALUES ('a1', 'placement', 'queued', '{}', '{}', 1.0)")
    store = JobStore(path)
    store.open()
    try:
        old = store.get("a1")
        assert old is not None and old.worker is None and old.state == "queued"
        store.update("a1", worker={"executor": "ray", "node_id": "n1", "host": "127.0.0.2", "pid": 7})
        assert store.get("a1").worker == {"executor": "ray", "node_id": "n1", "host": "127.0.0.2", "pid": 7}
    finally:
        store.close()


def test_health_reports_where_solves_run_on_a_local_service(tmp_path: Path) -> None:
    """The default executor is this machine: one node."""
    with TestClient(create_app(Settings(workers=1, db_path=tmp_path / "jobs.sqlite3")),
                    base_url="http://127.0.0.1") as c:
        cluster = c.get("/healthz").json()["cluster"]
        metrics = c.get("/metrics").text
    assert cluster["executor"] == "local" and cluster["nodes"] == 1 and cluster["cpus"] >= 1
    assert "placer_cluster_nodes 1" in metrics
