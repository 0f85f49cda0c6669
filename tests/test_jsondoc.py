"""placer.jsondoc: what Python's json would read silently is refused, naming the place."""
from __future__ import annotations

import pytest

from placer.errors import DuplicateKeyError, InvalidJsonError, InvalidTextError, JsonTooDeepError
from placer.jsondoc import parse_json


@pytest.mark.parametrize(("text", "error", "message"), [
    (b'{"a": {"b": 1, "b": 2}}', DuplicateKeyError, "doc: a: key 'b' given more than once"),
    (b'[{"x": 1}, {"y": 1, "y": 1, "z": 0, "z": 0}]', DuplicateKeyError, "doc: [1]: key 'y', 'z' given more"),
    (b'{"a": ["ok", "x\\ud800"]}', InvalidTextError, "doc: a[1]: text is not valid Unicode"),
    (b'{"k\\udfff": 1}', InvalidTextError, "doc: the top-level object: key 'k\\udfff' is not valid Unicode"),
    ('{"a": "x\\ud800"}'.encode("utf-16"), InvalidTextError, "doc: a: text is not valid Unicode"),
    ('{"a": "x\\ud800"}', InvalidTextError, "doc: a: text is not valid Unicode"),
    (b"[[[[1]]]]", JsonTooDeepError, "doc: JSON nested deeper than 3 levels"),
    (b"[" * 100_000 + b"]" * 100_000, JsonTooDeepError, "doc: JSON nested deeper than 3 levels"),
    (b'{"a": NaN}', InvalidJsonError, "doc: NaN is not a JSON number"),
    (b'{"a": -1e999}', InvalidJsonError, "doc: number -1e999 is too large for a 64-bit float"),
    (b'{"a": 1' + b"0" * 5000 + b"}", InvalidJsonError, "doc: an integer has more than 4300 digits"),
    (b'{"a": [1, 2}', InvalidJsonError, "doc is not valid JSON: Expecting ',' delimiter at line 1 column 12"),
])
def test_refused(text: bytes | str, error: type[InvalidJsonError], message: str) -> None:
    with pytest.raises(error) as info:
        parse_json(text, "doc", max_depth=3)
    assert str(info.value).startswith(message), str(info.value)


def test_accepted_as_json_reads_it() -> None:
    assert parse_json(b'{"a": "\\u00e9\\ud83d\\ude00", "b": [1, 2.5, null, true], "\\u00e9": {}}', "doc", 3) == \
        {"a": "\u00e9\U0001F600", "b": [1, 2.5, None, True], "\u00e9": {}}
    assert parse_json("[1, 2]", "doc") == [1, 2]
    assert parse_json('{"big": ' + "9" * 400 + "}")["big"] == int("9" * 400)  # the schema's ranges refuse it


def test_the_bundled_documents_read_strictly() -> None:
    """Presets, examples and test instances have no repeated keys or odd numbers (they load with plain json)."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    files = [*(root / "hardware_graphs").glob("*.json"), *(root / "placer" / "examples").glob("*.json")]
    assert len(files) >= 9
    for path in files:
        parse_json(path.read_bytes(), str(path))
