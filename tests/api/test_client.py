"""placer.client against a real `placer serve` (with an API key): typed answers, jobs with
progress, cancel, and errors from the project's error tree with the service's code."""
from __future__ import annotations

import copy
import time
from collections.abc import Iterator

import pytest

from placer.client import CrossoverResult, Job, PlacerClient, SimulationResult
from placer.crossover import parse_config, run
from placer.errors import InputError, PlacerError, ServiceCallError, ServiceInputError
from placer.progress import PHASES
from placer.schema import GraphSpec, HardwareSpec, ResultSpec, parse_graph
from tests.api.service_helpers import (
    DIAMOND,
    DIAMOND_OPTIMUM_MS,
    TWO_GPUS,
    ServiceProcess,
    four_gpus,
    free_port,
    layered_graph,
)

KEY = "client-test-key"


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServiceProcess]:
    svc = ServiceProcess(tmp_path_factory.mktemp("client"), workers=2, queue_size=8, max_ops=200,
                         max_time_limit_s=60, async_ops_threshold=20, api_key=KEY)
    svc.start()
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def client(service: ServiceProcess) -> PlacerClient:
    return PlacerClient(service.base_url, api_key=KEY, timeout_s=60)


def test_place_answers_a_typed_result(client: PlacerClient) -> None:
    result = client.place(parse_graph(DIAMOND), HardwareSpec.model_validate(TWO_GPUS),
                          {"solver": "cpsat", "time_limit_s": 10, "threads": 1})
    assert isinstance(result, ResultSpec)
    assert result.status == "optimal" and result.makespan_ms == pytest.approx(DIAMOND_OPTIMUM_MS)
    assert set(result.placement) == {"a", "b", "c", "d"}


def test_place_waits_for_a_job_when_the_service_answers_202(client: PlacerClient) -> None:
    seen: list[Job] = []
    result = client.place(layered_graph(30), TWO_GPUS, {"solver": "heft"}, poll_s=0.1, on_progress=seen.append)
    assert result.status == "feasible" and result.solver == "heft"
    assert seen and seen[-1].finished and seen[-1].state == "succeeded"


def test_submit_poll_wait_report_the_phases(client: PlacerClient) -> None:
    job_id = client.submit(layered_graph(40), four_gpus(), {"solver": "cpsat", "time_limit_s": 3, "threads": 1})
    first = client.poll(job_id)
    assert first.id == job_id and first.kind == "placement" and first.state in ("queued", "running", "succeeded")
    polled: list[Job] = []
    job = client.wait(job_id, timeout_s=60, poll_s=0.1, on_progress=polled.append)
    assert job.state == "succeeded" and isinstance(job.result, ResultSpec)
    assert job.result.status in ("optimal", "feasible")
    # the last progress event of a solve is its "finish" phase, kept with the job
    assert job.progress is not None and job.progress.phase == "finish"
    assert job.progress.incumbent_ms == pytest.approx(job.result.makespan_ms)
    phases = [j.progress.phase for j in polled if j.progress is not None]
    assert all(p in PHASES for p in phases)
    elapsed = [j.progress.elapsed_s for j in polled if j.progress is not None]
    assert elapsed == sorted(elapsed)
    assert client.result(job_id).makespan_ms == job.result.makespan_ms


def test_cancel_keeps_the_incumbent(client: PlacerClient) -> None:
    job_id = client.submit(layered_graph(60), four_gpus(), {"solver": "cbc", "time_limit_s": 50})
    give_up = time.monotonic() + 60  # a guard against a hung service, not a timing assertion
    job = client.poll(job_id)
    while (job.progress is None or job.progress.incumbent_ms is None) and time.monotonic() < give_up:
        time.sleep(0.05)
        job = client.poll(job_id)
    assert job.state == "running" and job.progress is not None and job.progress.phase in PHASES
    cancelled = client.cancel(job_id)
    assert cancelled.state == "cancelled"
    assert cancelled.result is not None and cancelled.result.status == "feasible"
    with pytest.raises(ServiceCallError) as info:
        client.cancel("0" * 32)
    assert info.value.status == 404 and info.value.code == "job_not_found"
    assert not isinstance(info.value, InputError)


def test_simulate_validate_and_documents(client: PlacerClient) -> None:
    sim = client.simulate(DIAMOND, TWO_GPUS, {"a": "gpu0", "b": "gpu0", "c": "gpu1", "d": "gpu1"}, contention=True)
    assert isinstance(sim, SimulationResult) and sim.makespan_ms == pytest.approx(DIAMOND_OPTIMUM_MS)
    assert sim.transfers and sim.transfers[0].route == ["gpu0", "gpu1"]
    result = client.place(DIAMOND, TWO_GPUS, {"solver": "heft"})
    again = client.simulate(DIAMOND, TWO_GPUS, result=result)
    assert again.policy == "order" and again.makespan_ms == pytest.approx(result.makespan_ms)
    assert client.validate(DIAMOND, TWO_GPUS, result).valid
    tampered = result.model_copy(deep=True)
    tampered.schedule[-1].start_ms -= 0.5
    check = client.validate(DIAMOND, TWO_GPUS, tampered)
    assert not check.valid and check.violations
    assert isinstance(client.hardware("dgx1_v100"), HardwareSpec)
    model = client.model("alexnet", batch=8)
    assert isinstance(model, GraphSpec) and len(model.ops) > 10
    assert client.health().status in ("ok", "degraded")


def test_crossover_is_typed_and_matches_the_library(client: PlacerClient) -> None:
    config = {"format": "placer.crossover/v1", "name": "gnmt", "devices": [1, 2, 4, 8],
              "epochs": {"by_width": {"1": 1.6, "2": 1.6, "4": 1.5, "8": 1.5}}, "scaling_efficiency": 1.0,
              "mp_speedup": {"2": 1.15, "4": 1.5}}
    answer = client.crossover(config)
    assert isinstance(answer, CrossoverResult)
    expected = run(parse_config(copy.deepcopy(config))).to_dict()
    assert [r.devices for r in answer.rows] == [1, 2, 4, 8]
    assert [r.dp_only.speedup for r in answer.rows] == pytest.approx([r["dp_only"]["speedup"] for r in expected["rows"]])
    assert answer.rows[2].hybrids[0].m == 2 and answer.rows[2].hybrids[0].threshold is not None
    assert answer.crossover_devices == expected["crossover_devices"]


def test_refused_input_raises_input_errors_with_the_service_code(client: PlacerClient) -> None:
    with pytest.raises(ServiceInputError) as info:
        client.place(DIAMOND, "no_such_machine")
    assert isinstance(info.value, InputError) and isinstance(info.value, PlacerError)
    assert info.value.status == 404 and info.value.code == "unknown_preset" and "no_such_machine" in info.value.detail
    broken = copy.deepcopy(DIAMOND)
    broken["edges"].append({"src": "a", "dst": "zz", "bytes": 1})
    with pytest.raises(ServiceInputError) as info:
        client.place(broken, TWO_GPUS)
    assert info.value.status == 422 and "zz" in info.value.detail and info.value.code
    with pytest.raises(ServiceInputError) as info:
        client.simulate(DIAMOND, TWO_GPUS, {"a": "gpu9"})
    assert info.value.status == 422


def test_auth_and_transport_failures_are_service_call_errors(service: ServiceProcess) -> None:
    with pytest.raises(ServiceCallError) as info:
        PlacerClient(service.base_url, api_key="wrong").hardware("dgx1_v100")
    assert info.value.status == 401 and info.value.code == "unauthorized"
    assert not isinstance(info.value, InputError)
    with pytest.raises(ServiceCallError) as info:
        PlacerClient(f"http://127.0.0.1:{free_port()}", timeout_s=5).health()
    assert info.value.status is None and info.value.code == "unreachable"
    with pytest.raises(ServiceCallError) as info:
        PlacerClient(service.base_url, api_key=KEY).wait("0" * 32, timeout_s=0)
    assert info.value.code == "job_not_found"


def test_a_job_failed_with_no_solution_still_has_its_result(tmp_path_factory: pytest.TempPathFactory) -> None:
    svc = ServiceProcess(tmp_path_factory.mktemp("client-no-solution"), workers=1,
                         solve_target="tests.api.dummy_targets:no_solution").start()
    try:
        client = PlacerClient(svc.base_url, timeout_s=60)
        job_id = client.submit(DIAMOND, TWO_GPUS)
        job = client.wait(job_id)
        assert job.state == "failed" and job.error is not None and job.error.code == "no_solution"
        result = client.result(job_id)  # as a synchronous solve answers it: 200 with the status
        assert result.status == "no_solution"
        assert client.place(DIAMOND, TWO_GPUS).status == "no_solution"
    finally:
        svc.stop()
