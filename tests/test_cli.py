"""The command line contract: outputs, exit codes, messages on stderr."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from placer.cli import EXIT_BACKEND_UNAVAILABLE, EXIT_FAILURE, main
from tests.conftest import fully_connected, graph
from tests.test_exact import FORK, VERIFY

EXAMPLES = Path(__file__).resolve().parents[1] / "placer" / "examples"


@pytest.fixture()
def files(tmp_path: Path) -> tuple[Path, Path]:
    g, hw = tmp_path / "g.json", tmp_path / "hw.json"
    g.write_text(json.dumps(FORK))
    hw.write_text(json.dumps(fully_connected(2)))
    return g, hw


def test_solve_writes_a_result_the_shared_verifier_accepts(files, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    g, hw = files
    out, trace, gantt = tmp_path / "r.json", tmp_path / "t.json", tmp_path / "g.png"
    code = main(["solve", str(g), "--hardware", str(hw), "-o", str(out), "--trace", str(trace),
                 "--gantt", str(gantt), "--threads", "1"])
    assert code == 0
    text = capsys.readouterr().out
    assert "status    optimal" in text and "makespan  7 ms" in text and "1.429x vs one device" in text
    assert "gpu0" in text and "gpu1" in text
    result = json.loads(out.read_text())
    assert result["format"] == "placer.result/v1" and result["baselines"]["heft_ms"] == pytest.approx(7.0)
    assert json.loads(trace.read_text())["traceEvents"]
    assert gantt.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = subprocess.run([sys.executable, str(VERIFY), str(g), str(hw), str(out), "--optimum", "7"],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout
    assert main(["validate", str(g), "--hardware", str(hw), str(out)]) == 0
    assert main(["simulate", str(g), "--hardware", str(hw), "--placement", str(out), "--contention",
                 "-o", str(tmp_path / "s.json")]) == 0
    assert json.loads((tmp_path / "s.json").read_text())["makespan_ms"] == pytest.approx(7.0)


def test_validate_rejects_a_tampered_result(files, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    g, hw = files
    out = tmp_path / "r.json"
    assert main(["solve", str(g), "--hardware", str(hw), "-o", str(out), "--solver", "heft"]) == 0
    doc = json.loads(out.read_text())
    doc["schedule"][1]["start_ms"] -= 1.5
    out.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["validate", str(g), "--hardware", str(hw), str(out)]) == 1
    assert "INVALID" in capsys.readouterr().out


def test_exit_codes(files, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    g, hw = files
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(graph([("a", 1.0), ("b", 1.0)], [("a", "b", 0), ("b", "a", 0)])))
    assert main(["solve", str(bad), "--hardware", str(hw)]) == 2
    assert "cycle: a -> b -> a" in capsys.readouterr().err
    assert main(["solve", str(tmp_path / "missing.json"), "--hardware", str(hw)]) == 2
    assert main(["solve", str(g), "--hardware", "no_such_preset"]) == 2
    assert "neither a file nor a preset" in capsys.readouterr().err
    big = tmp_path / "big.json"
    big.write_text(json.dumps(graph([("a", 1.0, 10**12)])))
    assert main(["solve", str(big), "--hardware", str(hw)]) == 0  # no memory limit on these devices
    small = tmp_path / "small.json"
    small.write_text(json.dumps(fully_connected(2, memory_bytes=1000)))
    assert main(["solve", str(big), "--hardware", str(small)]) == 3
    assert "op 'a' needs" in capsys.readouterr().out


def test_console_script_runs_the_demo() -> None:
    done = subprocess.run([sys.executable, "-m", "placer.cli", "demo", "--time-limit", "20"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "inception-mini-train: 58 ops" in done.stdout and "status    optimal" in done.stdout


def test_solve_on_the_bundled_example_with_every_back_end_agrees(tmp_path: Path) -> None:
    g, hw = EXAMPLES / "inception_mini.json", EXAMPLES / "4gpu_nvlink.json"
    out = tmp_path / "r.json"
    assert main(["solve", str(g), "--hardware", str(hw), "-o", str(out), "-q", "--time-limit", "20"]) == 0
    optimum = json.loads(out.read_text())
    assert optimum["status"] == "optimal"
    heft = tmp_path / "h.json"
    assert main(["solve", str(g), "--hardware", str(hw), "-o", str(heft), "--solver", "heft"]) == 0
    assert optimum["makespan_ms"] <= json.loads(heft.read_text())["makespan_ms"]


@pytest.mark.parametrize("doc", [
    {"a": "gpu0", "b": "gpu0", "c": "gpu1"},
    {"placement": {"a": "gpu0", "b": "gpu0", "c": "gpu1"}},
    {"placement": {"a": "gpu0", "b": "gpu0", "c": "gpu1"}, "order": {"gpu0": ["a", "b"], "gpu1": ["c"]}},
], ids=["bare-map", "placement-object", "placement-and-order"])
def test_simulate_takes_a_placement_map_as_well_as_a_result(files, tmp_path: Path, doc: dict) -> None:
    g, hw = files
    placement, out = tmp_path / "p.json", tmp_path / "s.json"
    placement.write_text(json.dumps(doc))
    done = subprocess.run([sys.executable, "-m", "placer.cli", "simulate", str(g), "--hardware", str(hw),
                           "--placement", str(placement), "-o", str(out)], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text())
    # a and b on gpu0 (0-2, 2-6); the 1 MB tensor reaches c on gpu1 at 3: c runs 3-7
    assert report["makespan_ms"] == pytest.approx(7.0)
    assert report["policy"] == ("order" if "order" in doc else "fifo")


@pytest.mark.parametrize("doc,message", [
    ({"a": "gpu0", "b": 1}, r"expected a placer.result/v1 document, \{\"placement\": \{op: device\}\} or a bare map"),
    ({"placement": {"a": "gpu0"}, "colour": "red"}, r"p.json: colour: Extra inputs are not permitted"),
    ({"placement": {"a": "gpu0", "b": 3}}, r"p.json: placement.b: Input should be a valid string"),
    ({"status": "optimal", "placement": {"a": "gpu0"}}, r"result: solver: Field required"),
    ({"a": "gpu0", "b": "gpu0"}, r"placement: op 'c' is not placed"),
])
def test_simulate_names_what_is_wrong_with_a_placement(files, tmp_path: Path, capsys, doc: dict,
                                                       message: str) -> None:
    g, hw = files
    placement = tmp_path / "p.json"
    placement.write_text(json.dumps(doc))
    capsys.readouterr()
    assert main(["simulate", str(g), "--hardware", str(hw), "--placement", str(placement)]) == 2
    assert re.search(message, capsys.readouterr().err)


def test_a_missing_back_end_is_exit_5_with_one_line(files: tuple[Path, Path], tmp_path: Path) -> None:
    """A CBC binary that is not there (PLACER_CBC names no file): no traceback, its own exit code."""
    g, hw = files
    env = {**os.environ, "PLACER_CBC": str(tmp_path / "no-such-cbc")}
    done = subprocess.run([sys.executable, "-m", "placer.cli", "solve", str(g), "--hardware", str(hw),
                           "--solver", "cbc", "-q"], capture_output=True, text=True, timeout=120, env=env, check=False)
    assert done.returncode == EXIT_BACKEND_UNAVAILABLE == 5
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("placer: error (backend_unavailable): solver back end 'cbc' is not available here")
    assert "PLACER_CBC" in lines[0]


def test_a_failing_back_end_is_exit_1_with_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    from benchmarks.graphs import layered
    from placer.errors import SolverError

    def broken(*args: object, **kwargs: object) -> None:
        raise SolverError("MILP solver returned Undefined\n(line two)")

    monkeypatch.setattr("solvers.registry.PulpMilp.solve", broken)
    g, hw = tmp_path / "g.json", tmp_path / "hw.json"  # no heuristic proves it: the MILP runs
    g.write_text(json.dumps(layered(30, seed=1)))
    hw.write_text(json.dumps(fully_connected(4)))
    assert main(["solve", str(g), "--hardware", str(hw), "--solver", "highs", "-q"]) == EXIT_FAILURE
    assert capsys.readouterr().err == "placer: error (backend_error): MILP solver returned Undefined (line two)\n"
