"""Reading JSON documents strictly: the one reader of the CLI's files and the service's bodies.

Python's `json` accepts things other JSON readers do not, and keeps them silently: NaN and
Infinity, numbers that overflow a float to inf, a repeated key (the last value wins), and
strings holding a lone surrogate ("\\ud800"), which cannot be written back as UTF-8 and so
fail later, far from the input (a 500 and a reset connection in the service). `parse_json`
refuses each of them with an error naming where in the document it is.
"""
from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

from placer.errors import DuplicateKeyError, InvalidJsonError, InvalidTextError, JsonTooDeepError

__all__ = ["json_path", "parse_json"]


class _Pairs(dict):  # type: ignore[type-arg]
    """A JSON object whose text repeated a key (remembered until the walk reports it)."""

    duplicates: list[str]


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    doc = dict(pairs)
    if len(doc) == len(pairs):
        return doc
    out = _Pairs(doc)
    seen: set[str] = set()
    out.duplicates = [k for k, _ in pairs if k in seen or seen.add(k)]  # type: ignore[func-returns-value]
    return out


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text[:40]} is too large for a 64-bit float")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def json_path(parts: tuple[Any, ...]) -> str:
    """("graph", "ops", 0, "id") as "graph.ops[0].id"."""
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{str(part)[:80]}" if out else str(part)[:80]
    return out


def _valid_text(s: str) -> bool:
    if s.isascii():
        return True
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _path(link: tuple[Any, ...] | None) -> tuple[Any, ...]:
    parts: list[Any] = []
    while link is not None:
        link, key = link
        parts.append(key)
    return tuple(reversed(parts))


def _check_tree(doc: Any, what: str, max_depth: int | None, check_text: bool, check_keys: bool) -> None:
    """One walk over the containers: nesting depth, repeated keys and text that is not Unicode,
    each reported with its path (kept as parent links, spelled out only for the message)."""
    def bad_text(link: tuple[Any, ...] | None, text: str, key: bool) -> InvalidTextError:
        where = json_path(_path(link)) or ("the top-level object" if key else "the document")
        what_ = f"key {text[:40]!a} is" if key else "text is"
        return InvalidTextError(f"{what}: {where}: {what_} not valid Unicode (a lone surrogate such as \\ud800)"
                                + ("" if key else f": {text[:40]!a}"))

    if isinstance(doc, str) and check_text and not _valid_text(doc):
        raise bad_text(None, doc, key=False)
    stack: list[tuple[Any, int, tuple[Any, ...] | None]] = [(doc, 1, None)]
    while stack:
        node, depth, link = stack.pop()
        if max_depth is not None and depth > max_depth:
            raise JsonTooDeepError(f"{what}: JSON nested deeper than {max_depth} levels")
        if isinstance(node, dict):
            if check_keys and isinstance(node, _Pairs):
                where = json_path(_path(link)) or "the top-level object"
                keys = ", ".join(f"{k[:80]!a}" for k in node.duplicates[:5])
                raise DuplicateKeyError(f"{what}: {where}: key {keys} given more than once "
                                        "(JSON objects must not repeat a key)")
            children: Any = node.items()
        elif isinstance(node, list):
            children = enumerate(node)
        else:
            continue
        for key, value in children:
            if check_text and isinstance(key, str) and not _valid_text(key):
                raise bad_text(link, key, key=True)
            if isinstance(value, (dict, list)):
                stack.append((value, depth + 1, (link, key)))
            elif check_text and isinstance(value, str) and not _valid_text(value):
                raise bad_text((link, key), value, key=False)


def parse_json(text: str | bytes, what: str = "document", max_depth: int | None = None,
               before_walk: Callable[[Any], None] | None = None) -> Any:
    """Parse `text` and refuse what Python's `json` would otherwise accept silently.

    `what` starts every message ("request body", a file name). Raises InvalidJsonError
    (or its subclasses JsonTooDeepError, DuplicateKeyError, InvalidTextError). `before_walk`
    sees the parsed document before the walk over it (the service refuses oversized requests
    there, before a walk that takes a second on a 10 MB body).

    >>> parse_json('{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> parse_json('{"ops": [{"id": "a", "id": "b"}]}', "graph.json")
    Traceback (most recent call last):
    placer.errors.DuplicateKeyError: graph.json: ops[0]: key 'id' given more than once (JSON objects must not repeat a key)
    """
    repeated: list[bool] = []

    def pairs(items: list[tuple[str, Any]]) -> dict[str, Any]:
        doc = _object(items)
        if isinstance(doc, _Pairs):
            repeated.append(True)
        return doc

    try:
        doc = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant, object_pairs_hook=pairs)
    except RecursionError:
        raise JsonTooDeepError(f"{what}: JSON nested deeper than {max_depth} levels" if max_depth
                               else f"{what}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise InvalidJsonError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except (ValueError, UnicodeDecodeError) as exc:
        detail = "an integer has more than 4300 digits" if "integer string conversion" in str(exc) else exc
        raise InvalidJsonError(f"{what}: {detail}") from None
    # UTF-8 cannot hold a surrogate, so in UTF-8 bytes only a \\u escape makes one (a NUL byte
    # means UTF-16 or UTF-32, which json also reads: check those, and str input, in full)
    if isinstance(text, bytes):
        check_text = b"\\u" in text or b"\x00" in text
    else:
        check_text = not text.isascii() or "\\u" in text
    if before_walk is not None:
        before_walk(doc)
    _check_tree(doc, what, max_depth, check_text, bool(repeated))
    return doc
