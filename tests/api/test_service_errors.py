"""One error tree: every error of placer, its back ends and its service is a PlacerError with a
stable code, mapped by one table to an HTTP status and by one to a CLI exit code, and keeps
its class across the worker's process boundary. A missing back end, through real HTTP."""
from __future__ import annotations

import inspect
from collections.abc import Iterator

import httpx
import pytest
from service_helpers import DIAMOND, TWO_GPUS, ServiceProcess, wait_for_job

import api.errors
import api.pool
import api.store
from api.errors import _HTTP_STATUS, http_status, rebuild_worker_error
from api.worker import _error_event
from placer.cli import EXIT_BACKEND_UNAVAILABLE, EXIT_BAD_INPUT, EXIT_FAILURE, exit_code
from placer.errors import PlacerError, ServiceError, SolverError, SolverUnavailableError, error_classes
from solvers.base import SolverError as SolverErrorOfSolvers


def _tree() -> list[type[PlacerError]]:
    assert api.errors and api.pool and api.store  # the service's classes are loaded
    found, todo = [], [PlacerError]
    while todo:
        cls = todo.pop()
        if cls not in found:  # a class with two parents in the tree (ServiceInputError) comes twice
            found.append(cls)
            todo.extend(cls.__subclasses__())
    return found


def _with_message(cls: type[PlacerError]) -> bool:
    """Whether the class is built from a message alone (QueueFullError also needs Retry-After)."""
    if "__init__" not in cls.__dict__ and all(_with_message(b) for b in cls.__bases__ if issubclass(b, PlacerError)):
        return True
    if "__init__" not in cls.__dict__:
        return False
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return len([p for p in params if p.default is p.empty]) <= 1


def test_every_error_is_in_the_one_tree_with_its_own_code() -> None:
    classes = _tree()
    names = {c.__name__ for c in classes}
    assert {"SolverError", "SolverUnavailableError", "ServiceError", "QueueFullError", "WorkerStartError",
            "StoreLockedError", "LimitExceededError", "InvalidGraphError"} <= names
    assert SolverErrorOfSolvers is SolverError  # the back ends raise the tree's class
    assert issubclass(api.pool.WorkerStartError, ServiceError) and issubclass(api.store.StoreLockedError, ServiceError)
    codes = [c.__dict__.get("code") for c in classes]
    assert None not in codes, [c for c in classes if "code" not in c.__dict__]
    assert len(set(codes)) == len(codes)
    assert set(error_classes()) == set(codes)


def test_the_http_table_covers_the_tree() -> None:
    for cls in _tree():
        assert any(c in _HTTP_STATUS for c in cls.__mro__), cls
    assert http_status(SolverUnavailableError("x")) == 503
    assert http_status(SolverError("x")) == 500
    assert http_status(api.pool.WorkerStartError("x")) == 503
    assert http_status(api.store.StoreLockedError("x")) == 503


def test_the_exit_code_table() -> None:
    assert exit_code(SolverUnavailableError("x")) == EXIT_BACKEND_UNAVAILABLE == 5
    assert exit_code(SolverError("x")) == EXIT_FAILURE
    assert exit_code(api.errors.LimitExceededError("x")) == EXIT_BAD_INPUT
    assert exit_code(KeyError("x")) == EXIT_FAILURE


@pytest.mark.parametrize("cls", [c for c in _tree() if _with_message(c)], ids=lambda c: c.__name__)
def test_an_error_keeps_its_class_and_code_across_the_worker_boundary(cls: type[PlacerError]) -> None:
    event = _error_event(cls("what went wrong"))
    assert event["code"] == cls.code
    rebuilt = rebuild_worker_error(event)
    assert type(rebuilt) is cls and str(rebuilt) == "what went wrong"


def test_a_foreign_exception_in_a_worker_is_a_worker_failure() -> None:
    rebuilt = rebuild_worker_error(_error_event(OverflowError("int too large")))
    assert isinstance(rebuilt, api.errors.WorkerFailedError)
    assert "OverflowError: int too large" in str(rebuilt)


# ------------------------------------------------------------------ a missing back end, over HTTP


@pytest.fixture(scope="module")
def no_cbc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    """A service whose CBC binary is absent (PLACER_CBC names no file)."""
    workdir = tmp_path_factory.mktemp("nocbc")
    svc = ServiceProcess(workdir, workers=1, cbc=str(workdir / "no-such-cbc")).start()
    with svc.client() as client:
        yield client
    svc.stop()


def test_a_missing_back_end_is_503_backend_unavailable(no_cbc: httpx.Client) -> None:
    assert no_cbc.get("/healthz").json()["solvers"]["cbc"] is False
    reply = no_cbc.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                "options": {"solver": "cbc", "time_limit_s": 5}})
    assert reply.status_code == 503, reply.text
    body = reply.json()
    assert body["code"] == "backend_unavailable"
    assert "'cbc' is not available here" in body["detail"] and "PLACER_CBC" in body["detail"]
    ok = no_cbc.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                             "options": {"solver": "cpsat", "time_limit_s": 5}})
    assert ok.status_code == 200 and ok.json()["status"] == "optimal"


def test_a_missing_back_end_fails_an_async_job_with_its_code(no_cbc: httpx.Client) -> None:
    reply = no_cbc.post("/v1/placements", json={"graph": DIAMOND, "hardware": TWO_GPUS,
                                                "options": {"solver": "cbc", "time_limit_s": 5, "async": True}})
    assert reply.status_code == 202, reply.text
    job = wait_for_job(no_cbc, reply.json()["job_id"])
    assert job["state"] == "failed"
    assert job["error"]["code"] == "backend_unavailable"

