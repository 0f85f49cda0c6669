"""Live progress: every phase of a solve is reported, repeats are dropped, a heartbeat fills
the silence (placer.progress, placer.engine, the CLI printer, the worker's progress events)."""
from __future__ import annotations

import threading
from itertools import pairwise

import pytest

from api.solve import progress_event
from placer.commands.solve import format_progress
from placer.engine import PlaceOptions, Strategy, place
from placer.progress import PHASES, Progress, Reporter
from placer.resolve import resolve_graph, resolve_hardware

EXAMPLES = "placer/examples"


@pytest.fixture(scope="module")
def inception_mini():
    return resolve_graph(f"{EXAMPLES}/inception_mini.json"), resolve_hardware(f"{EXAMPLES}/4gpu_nvlink.json")


def _solve(graph, hardware, strategy: Strategy | None = None, **options) -> list[Progress]:
    events: list[Progress] = []
    result = place(graph, hardware, PlaceOptions(time_limit_s=2, threads=1, deterministic=True, **options),
                   progress=events.append, strategy=strategy)
    # one clock: every event up to the final result comes before the result's solve time
    assert all(e.elapsed_s <= result.solve_time_s for e in events if not e.heartbeat)
    return events


def _assert_no_repeats(events: list[Progress]) -> None:
    """Only a heartbeat repeats a line; any other event changes phase, message or a number."""
    lines = [e for e in events if not e.heartbeat]
    for a, b in pairwise(lines):
        same = (a.phase, a.message, a.incumbent_ms, a.bound_ms) == (b.phase, b.message, b.incumbent_ms, b.bound_ms)
        assert not same or b.result is not None, f"repeated line: {format_progress(b)}"


def test_a_decomposed_solve_reports_every_phase_and_each_component(inception_mini) -> None:
    events = _solve(*inception_mini, strategy=Strategy(decompose_min_ops=10))
    phases = [e.phase for e in events]
    for phase in ("model", "baselines", "stages", "decomposition", "group_moves", "cpsat", "finish"):
        assert phase in phases, f"no {phase!r} event in {phases}"
    assert set(phases) <= set(PHASES)
    # phases come in the engine's order, each entered once
    firsts = list(dict.fromkeys(phases))
    assert firsts == sorted(firsts, key=PHASES.index)
    components = [e.message for e in events if e.phase == "decomposition" and e.message.startswith("component ")]
    assert len(components) >= 2, components
    assert all(e.elapsed_s >= 0 for e in events)
    assert events[-1].phase == "finish" and events[-1].incumbent_ms is not None
    assert [e.elapsed_s for e in events] == sorted(e.elapsed_s for e in events)
    _assert_no_repeats(events)


def test_coarse_cpsat_and_polish_are_phases_of_their_own(inception_mini) -> None:
    events = _solve(*inception_mini, strategy=Strategy(big_model_ops=10, polish_share_big=0.3),
                    coarsen="force", coarsen_max_ops=20)
    phases = {e.phase for e in events}
    assert {"cpsat_coarse", "polish"} <= phases, phases
    assert "cpsat" not in phases and "decomposition" not in phases
    _assert_no_repeats(events)


def test_a_milp_solve_reports_its_phase(inception_mini) -> None:
    graph, hardware = inception_mini
    small = graph.model_copy(update={"ops": graph.ops[:6], "edges": [e for e in graph.edges
                                                                      if e.src in {o.id for o in graph.ops[:6]}
                                                                      and e.dst in {o.id for o in graph.ops[:6]}]})
    events = _solve(small, hardware, solver="highs")
    assert "milp" in {e.phase for e in events}
    milp = next(e for e in events if e.phase == "milp")
    assert milp.message.startswith("highs: solving")


def test_reporter_drops_repeats_and_merges_numbers() -> None:
    seen: list[Progress] = []
    reporter = Reporter(seen.append)
    reporter.phase("cpsat", "solving", 10.0, 5.0)
    reporter.report("solving", 10.0, 5.0)            # the same line: dropped
    reporter.report("solving", 12.0, 4.0)            # worse numbers than known: merged away, dropped too
    reporter.update(incumbent_ms=9.0, bound_ms=6.0)  # no line of its own
    assert [(e.phase, e.message, e.incumbent_ms, e.bound_ms) for e in seen] == [("cpsat", "solving", 10.0, 5.0)]
    reporter.heartbeat()
    reporter.report("solving")                       # carries the merged numbers: a new line
    assert [(e.incumbent_ms, e.bound_ms, e.heartbeat) for e in seen[1:]] == [(9.0, 6.0, True), (9.0, 6.0, False)]
    reporter.heartbeat()
    reporter.heartbeat()
    assert [e.heartbeat for e in seen[3:]] == [True, True]
    assert all(e.phase == "cpsat" for e in seen)


def test_a_result_is_never_dropped() -> None:
    from placer.schema import ResultSpec

    seen: list[Progress] = []
    reporter = Reporter(seen.append)
    result = ResultSpec(status="feasible", solver="cpsat", makespan_ms=3.0)
    reporter.phase("stages", "heuristic incumbent", 3.0, 1.0, result)
    reporter.report("heuristic incumbent", 3.0, 1.0, result)
    assert len(seen) == 2 and all(e.result is result for e in seen)


def test_reporter_without_a_sink_does_nothing() -> None:
    with Reporter(None) as reporter:
        reporter.phase("model", "x")
        reporter.heartbeat()
        assert reporter._thread is None


def test_the_heartbeat_thread_repeats_the_state_while_a_phase_runs() -> None:
    """Wait (bounded, generous) for a heartbeat: the phase itself never reports again."""
    got = threading.Event()
    seen: list[Progress] = []

    def sink(event: Progress) -> None:
        seen.append(event)
        if event.heartbeat:
            got.set()

    with Reporter(sink, heartbeat_s=0.05) as reporter:
        reporter.phase("decomposition", "component 1 of 3", 7.0, 2.0)
        assert got.wait(60.0), "no heartbeat"
    after = len(seen)
    beat = next(e for e in seen if e.heartbeat)
    assert (beat.phase, beat.message, beat.incumbent_ms, beat.bound_ms) == ("decomposition", "component 1 of 3",
                                                                             7.0, 2.0)
    assert not reporter._thread.is_alive() and len(seen) == after  # stopped with the block


def test_progress_events_and_cli_lines_carry_phase_and_heartbeat() -> None:
    event = Progress(3.5, 12.0, 10.0, "solving (40 ops)", None, "cpsat", True)
    doc = progress_event(event)
    assert doc == {"elapsed_s": 3.5, "incumbent_ms": 12.0, "bound_ms": 10.0, "message": "solving (40 ops)",
                   "phase": "cpsat", "heartbeat": True, "result": None}
    line = format_progress(event)
    assert "cpsat" in line and "solving (40 ops)" in line and "12 ms" in line and line.endswith("(running)")
    assert not format_progress(Progress(3.5, None, None, "x", phase="model")).endswith("(running)")


def test_the_cli_prints_each_phase_once_per_change(capsys) -> None:
    from placer.cli import main

    code = main(["solve", f"{EXAMPLES}/inception_mini.json", "--hardware", f"{EXAMPLES}/4gpu_nvlink.json",
                 "--time-limit", "2", "--threads", "1", "--deterministic"])
    assert code == 0
    lines = [line for line in capsys.readouterr().err.splitlines() if line.startswith("[")]
    shown = {line.split()[3] for line in lines}
    assert {"model", "baselines", "cpsat", "finish"} <= shown, lines
    beats = [line for line in lines if not line.endswith("(running)")]
    assert all(a.split("] ", 1)[1] != b.split("] ", 1)[1] for a, b in pairwise(beats)), lines
