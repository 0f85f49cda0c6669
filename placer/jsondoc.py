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


def _check_tree(doc: Any, what: str, max_depth: int | None) -> None:
    """One walk: nesting depth, repeated keys and text that is not Unicode, each with its path."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        node, path = stack.pop()
        if isinstance(node, str):
            if not _valid_text(node):
                raise InvalidTextError(f"{what}: {json_path(path) or 'the document'}: text is not valid Unicode "
                                       f"(a lone surrogate such as \\ud800): {node[:40]!a}")
            continue
        if not isinstance(node, (dict, list)):
            continue
        if max_depth is not None and len(path) >= max_depth:
            raise JsonTooDeepError(f"{what}: JSON nested deeper than {max_depth} levels")
        if isinstance(node, dict):
            if isinstance(node, _Pairs):
                where = json_path(path) or "the top-level object"
                keys = ", ".join(ascii(k)[:80] for k in node.duplicates[:5])
                raise DuplicateKeyError(f"{what}: {where}: key {keys} given more than once "
                                        "(JSON objects must not repeat a key)")
            for key, value in node.items():
                if not _valid_text(key):
                    raise InvalidTextError(f"{what}: {json_path(path) or 'the top-level object'}: key "
                                           f"{key[:40]!a} is not valid Unicode (a lone surrogate)")
                stack.append((value, (*path, key)))
        else:
            stack.extend((child, (*path, i)) for i, child in enumerate(node))


def parse_json(text: str | bytes, what: str = "document", max_depth: int | None = None) -> Any:
    """Parse `text` and refuse what Python's `json` would otherwise accept silently.

    `what` starts every message ("request body", a file name). Raises InvalidJsonError
    (or its subclasses JsonTooDeepError, DuplicateKeyError, InvalidTextError).

    >>> parse_json('{"a": [1, 2.5]}')
    {'a': [1, 2.5]}
    >>> parse_json('{"ops": [{"id": "a", "id": "b"}]}', "graph.json")
    Traceback (most recent call last):
    placer.errors.DuplicateKeyError: graph.json: ops[0]: key 'id' given more than once (JSON objects must not repeat a key)
    """
    try:
        doc = json.loads(text, parse_float=_finite_float, parse_constant=_no_constant, object_pairs_hook=_object)
    except RecursionError:
        raise JsonTooDeepError(f"{what}: JSON nested deeper than {max_depth} levels" if max_depth
                               else f"{what}: JSON nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise InvalidJsonError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") \
            from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidJsonError(f"{what}: {exc}") from None
    _check_tree(doc, what, max_depth)
    return doc
