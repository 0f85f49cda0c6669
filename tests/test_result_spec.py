"""The result document is typed: baselines, simulation, stats and routing are declared fields,
`stats` keeps the JSON keys it had as an untyped bag, and PlaceOptions.contention is read."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from placer.engine import PlaceOptions, place
from placer.schema import (
    Baselines,
    ResultSpec,
    SimulationSummary,
    SolveStats,
    parse_graph,
    parse_hardware,
    parse_result,
)
from tests.conftest import fully_connected, graph
from tests.test_exact import FORK

# a feeds b and c, pinned to the other GPU: both 1 MB tensors want gpu0->gpu1 when a ends at 1 ms.
# Without contention both arrive at 2 ms (1 ms each at 1 GB/s): b and c run 2-2.5 and 2.5-3.
# With one transfer at a time per link direction the second input arrives at 3: it runs 3-3.5.
FAN = {
    "format": "placer.graph/v1", "name": "fan",
    "ops": [{"id": "a", "time_ms": 1.0, "device": "gpu0"}, {"id": "b", "time_ms": 0.5, "device": "gpu1"},
            {"id": "c", "time_ms": 0.5, "device": "gpu1"}],
    "edges": [{"src": "a", "dst": "b", "bytes": 1_000_000}, {"src": "a", "dst": "c", "bytes": 1_000_000}],
}


def _place(doc: dict, hw: dict, **options: object) -> ResultSpec:
    opts = PlaceOptions(**{"time_limit_s": 10, "threads": 1, "relative_gap": 0.0, **options})
    return place(parse_graph(doc), parse_hardware(hw), opts)


def test_the_result_declares_how_it_was_found() -> None:
    r = _place(FORK, fully_connected(2))
    assert isinstance(r.baselines, Baselines) and r.baselines.heft_ms == pytest.approx(7.0)
    assert isinstance(r.simulation, SimulationSummary) and r.simulation.makespan_ms == pytest.approx(7.0)
    assert isinstance(r.stats, SolveStats) and r.stats.ops == 3 and r.stats.devices == 2
    assert r.routing == "shortest" and r.model_extra == {}
    doc = r.model_dump(mode="json")
    # the keys benchmarks and reports read, under the names they had; nothing a run never reached
    assert {"ops", "edges", "devices", "groups", "bounds_ms", "tight_bound", "best_from", "mode", "cpsat_work",
            "cpsat_calls"} <= set(doc["stats"])
    assert None not in doc["stats"].values()
    assert not any(k.startswith(("decomposition_", "neighbourhood_")) for k in doc["stats"])
    assert doc["baselines"] == {"single_device_ms": 10.0, "heft_ms": 7.0, "critical_path_ms": r.baselines.critical_path_ms}
    assert parse_result(doc) == r  # the document reads back into the same typed result


def test_an_infeasible_result_still_has_typed_stats() -> None:
    tiny = fully_connected(2, memory_bytes=10)
    r = _place(graph([("a", 1.0, 100)]), tiny)
    assert r.status == "infeasible" and r.stats is not None and r.stats.ops == 1
    assert r.simulation is None and r.baselines == Baselines()


def test_stats_accept_only_declared_fields_of_their_type() -> None:
    stats = SolveStats()
    stats.record(solver_status="optimal", build_s=0.5)
    assert stats.model_dump() == {"solver_status": "optimal", "build_s": 0.5}
    with pytest.raises(AttributeError, match="SolveStats has no field 'bogus'"):
        stats.record(bogus=1)
    with pytest.raises(ValidationError):
        stats.record(ops="many")
    stats.count("rejected_candidates", "heft")
    stats.count("rejected_candidates", "heft")
    assert stats.rejected_candidates == {"heft": 2}


def test_a_result_from_an_older_version_still_reads() -> None:
    old = {"format": "placer.result/v1", "status": "feasible", "solver": "cpsat", "makespan_ms": 3.0,
           "baselines": {}, "stats": {"ops": 2, "some_old_counter": 7}, "tool": "elsewhere"}
    r = parse_result(old)
    assert r.stats is not None and r.stats.ops == 2 and r.stats.model_dump()["some_old_counter"] == 7
    assert r.baselines == Baselines() and r.model_extra == {"tool": "elsewhere"}


def test_the_schema_describes_every_field_of_the_result() -> None:
    schema = ResultSpec.model_json_schema(mode="serialization")
    props = schema["properties"]
    for name in ("baselines", "simulation", "stats", "routing", "stopped_by"):
        assert name in props
    stats = schema["$defs"]["SolveStats"]["properties"]
    assert {"decomposition_components", "solver_wall_s", "best_from", "mode"} <= set(stats)
    assert stats["solver_wall_s"]["description"] == "wall time of the exact back end"


def test_contention_option_reports_the_contended_replay() -> None:
    hw = fully_connected(2)
    free = _place(FAN, hw)
    busy = _place(FAN, hw, contention=True)
    assert free.makespan_ms == busy.makespan_ms  # the solvers' model has no contention
    assert free.simulation is not None and busy.simulation is not None
    # both replays are always measured; the option says which one utilisation comes from
    assert free.simulation.contention_makespan_ms == busy.simulation.contention_makespan_ms
    assert busy.simulation.makespan_ms == pytest.approx(3.0)
    assert busy.simulation.contention_makespan_ms == pytest.approx(3.5)
    assert not free.simulation.contention and busy.simulation.contention
    gpu1_busy_ms = 1.0
    assert free.simulation.device_utilisation["gpu1"] == pytest.approx(gpu1_busy_ms / free.simulation.makespan_ms)
    assert busy.simulation.device_utilisation["gpu1"] == pytest.approx(
        gpu1_busy_ms / busy.simulation.contention_makespan_ms)
    assert busy.simulation.link_busy_ms == {"gpu0->gpu1": pytest.approx(2.0)}
