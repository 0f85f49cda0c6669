"""The CLI reads its files as strictly as the service reads bodies (placer.jsondoc and the
documented ranges of placer.schema): each bad file is one line on stderr naming the place, exit 2."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from placer.cli import main
from tests.conftest import fully_connected
from tests.test_exact import FORK

HUGE = "1" + "0" * 400  # a valid JSON integer, too large for a float


def _solve(tmp_path: Path, graph_text: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    g, hw = tmp_path / "g.json", tmp_path / "hw.json"
    g.write_text(graph_text)
    hw.write_text(json.dumps(fully_connected(2)))
    code = main(["solve", str(g), "--hardware", str(hw), "--threads", "1", "--time-limit", "5"])
    return code, capsys.readouterr().err


@pytest.mark.parametrize(("text", "expected"), [
    (('{"ops": [{"id": "a", "time_ms": 1}, {"id": "b", "time_ms": 1}], "edges": [{"src": "a", "dst": "b", '
     f'"bytes": {HUGE}}}]}}'), ("graph: edges[0] (edge a -> b).bytes: Input should be less than or equal to "
                              "1000000000000000")),
    (f'{{"ops": [{{"id": "a", "time_ms": {HUGE}}}]}}', ("graph: ops[0] (id 'a').time_ms: number 10000000000000000000."
                                                       ".. (401 digits) is too large")),
    ('{"ops": [{"id": "a", "time_ms": 1, "time_ms": 2}]}', "g.json: ops[0]: key 'time_ms' given more than once"),
    ('{"ops": [{"id": "a", "time_ms": 1}], "ops": []}', "g.json: the top-level object: key 'ops' given more than once"),
    ('{"ops": [{"id": "a\\ud800", "time_ms": 1}]}', "g.json: ops[0].id: text is not valid Unicode"),
    ('{"ops": [{"id": "a", "time_ms": NaN}]}', "g.json: NaN is not a JSON number"),
    ('{"ops": [{"id": "a", "time_ms": 1e999}]}', "number 1e999 is too large for a 64-bit float"),
    ('{"ops": [{"id": "a", "time_ms": "1"}]}', "graph: ops[0] (id 'a').time_ms: Input should be a valid number"),
    ('{"ops": [{"id": "a", "time_ms": 1, "memory_bytes": 5.0}]}', "memory_bytes: Input should be a valid integer"),
    ('{"name": "' + "x" * 1025 + '", "ops": [{"id": "a", "time_ms": 1}]}',
     "graph: name: String should have at most 1024 characters"),
    ('{"ops": [{"id": "' + "a" * 257 + '", "time_ms": 1}]}', "id: String should have at most 256 characters"),
    ('{"ops": [{"id": "a", "time_ms": 1, "kind": "' + "k" * 257 + '"}]}',
     "kind: String should have at most 256 characters"),
], ids=["huge edge bytes", "huge time", "duplicate op key", "duplicate top-level key", "lone surrogate", "NaN",
        "float overflow", "string for a number", "float for an int", "long name", "long id", "long kind"])
def test_solve_rejects_a_bad_graph_file_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str,
                                                     expected: str) -> None:
    code, err = _solve(tmp_path, text, capsys)
    assert code == 2, err
    assert expected in err, err
    assert err.startswith("placer: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_numbers_at_their_documented_maxima_solve(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    graph = {"ops": [{"id": "a", "time_ms": 1e9, "memory_bytes": 10**15}, {"id": "b", "time_ms": 1}],
             "edges": [{"src": "a", "dst": "b", "bytes": 10**15}]}
    code, err = _solve(tmp_path, json.dumps(graph), capsys)
    assert code == 0, err


def test_a_valid_file_still_solves(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _solve(tmp_path, json.dumps(FORK), capsys)
    assert code == 0, err
