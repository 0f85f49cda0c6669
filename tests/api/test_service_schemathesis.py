"""Property-based requests generated from the service's own OpenAPI document (schemathesis),
valid ones and invalid ones: none gets a 5xx. Bounded: a few dozen examples per operation.

Drives schemathesis' strategies with hypothesis directly (its pytest plugin does not run under
pytest 9 yet).
"""
from __future__ import annotations

from collections.abc import Iterator

import pytest

schemathesis = pytest.importorskip("schemathesis")

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from service_helpers import ServiceProcess

EXAMPLES_PER_OPERATION = 20


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    # short solves and a long queue: what is generated must not be slow or refused with 503
    svc = ServiceProcess(tmp_path_factory.mktemp("schemathesis"), workers=2, queue_size=64,
                         max_time_limit_s=1, deadline_grace_s=2, max_threads=1, max_ops=200)
    svc.start()
    yield svc
    svc.stop()


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE], ids=["valid", "invalid"])
def test_no_generated_request_gets_a_server_error(service: ServiceProcess, mode: GenerationMode) -> None:
    schema = schemathesis.openapi.from_url(f"{service.base_url}/openapi.json")
    failures: dict[str, str] = {}
    calls = 0
    for found in schema.get_all_operations():
        operation = found.ok()

        @given(case=operation.as_strategy(mode))
        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def check(case) -> None:  # type: ignore[no-untyped-def]
            nonlocal calls
            calls += 1
            case.call_and_validate(checks=[not_a_server_error], timeout=30)

        try:
            check()
        except Unsatisfiable:
            assert mode is GenerationMode.NEGATIVE, operation.label  # nothing to get wrong: no parameters
        except Exception as exc:  # noqa: BLE001  collect every operation's failure, then report them together
            failures[operation.label] = f"{type(exc).__name__}: {str(exc)[:2000]}"
    assert calls >= 50
    assert not failures, "\n\n".join(f"{k}:\n{v}" for k, v in failures.items())
    assert 'status="500"' not in service.client().get("/metrics").text
