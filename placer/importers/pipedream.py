"""PipeDream profiles (`graph.txt` from msr-fiddle/pipedream's profiler) to a training step.

The file has one line per layer, then one line per edge (tab-indented):

    node2 -- Conv2d(3, 64, kernel_size=(11, 11), ...) -- forward_compute_time=22.316, \
backward_compute_time=6.405, activation_size=198246400.000, parameter_size=93184.000
    \tnode1 -- node2

Times are milliseconds and sizes bytes. `activation_size` may be a list for layers with
several outputs (`[6291456.0; 131072.0]`, summed, as PipeDream does), a partitioned graph
adds ` -- stage_id=N` (ignored), and a description may itself contain ` -- ` (the metadata
is found by its `forward_compute_time=` key).

The training step: per layer X, a forward op X (its forward time; memory = parameters +
activation) and a backward op X.bwd (its backward time, memory 0: the layer's bytes are
counted once, on X), both in group X; each edge u -> v carries u's activation bytes forward
and again as the gradient v.bwd -> u.bwd; X -> X.bwd carries 0 bytes (same group). The
`Input` layer's forward time is the data loader's: `zero_input_time=True` drops it.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from placer.errors import InputError
from placer.importers.result import ImportResult, finish
from placer.schema import GRAPH_FORMAT

__all__ = ["import_pipedream", "parse_profile", "Layer"]

_KEYS = ("forward_compute_time", "backward_compute_time", "activation_size", "parameter_size")
_FIELD = re.compile(r"(\w+)=(\[[^\]]*\]|[^,\s]+)")
_INPUT = re.compile(r"Input\d*")
_KIND = re.compile(r"[A-Za-z_][\w.]*")


@dataclass(frozen=True)
class Layer:
    """One profiled layer (times in ms, sizes in bytes) and the line it came from."""

    id: str
    description: str
    forward_ms: float
    backward_ms: float
    activation_bytes: float
    parameter_bytes: float
    line: int

    @property
    def is_input(self) -> bool:
        return _INPUT.fullmatch(self.description.strip()) is not None

    @property
    def kind(self) -> str:
        match = _KIND.match(self.description.strip())
        return match.group(0) if match else "layer"


def _number(text: str, where: str, key: str) -> float:
    text = text.strip()
    try:
        if text.startswith("["):
            parts = [p for p in text.strip("[]").split(";") if p.strip()]
            value = sum(float(p) for p in parts)
        else:
            value = float(text)
    except ValueError:
        raise InputError(f"{where}: {key}={text!r} is not a number") from None
    if not math.isfinite(value) or value < 0:
        raise InputError(f"{where}: {key}={text} must be a finite non-negative number")
    return value


def _layer(tokens: list[str], lineno: int, where: str) -> Layer:
    meta_at = max(
        (i for i, t in enumerate(tokens) if t.lstrip().startswith("forward_compute_time=")), default=0
    )
    if meta_at < 1:
        raise InputError(
            f"{where}: expected 'ID -- DESCRIPTION -- forward_compute_time=F, backward_compute_time=B, "
            "activation_size=A, parameter_size=P' or an edge 'ID -- ID'"
        )
    node_id = tokens[0].strip()
    if not node_id:
        raise InputError(f"{where}: the layer has an empty id")
    fields = dict(_FIELD.findall(tokens[meta_at]))
    where = f"{where} (layer {node_id})"
    missing = [k for k in _KEYS if k not in fields]
    if missing:
        raise InputError(f"{where}: missing {', '.join(missing)}")
    values = {k: _number(fields[k], where, k) for k in _KEYS}
    return Layer(
        id=node_id,
        description=" -- ".join(tokens[1:meta_at]).strip(),
        forward_ms=values["forward_compute_time"],
        backward_ms=values["backward_compute_time"],
        activation_bytes=values["activation_size"],
        parameter_bytes=values["parameter_size"],
        line=lineno,
    )


def parse_profile(
    text: str, source: str = "graph.txt"
) -> tuple[dict[str, Layer], list[tuple[str, str]], list[str]]:
    """Layers by id (file order), edges (file order, duplicates merged) and warnings."""
    layers: dict[str, Layer] = {}
    raw_edges: list[tuple[int, str, str]] = []
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        where = f"{source}:{lineno}"
        tokens = line.split(" -- ")
        is_edge = len(tokens) == 2 and "=" not in line and (raw.startswith("\t") or " " not in tokens[0])
        if is_edge:
            raw_edges.append((lineno, tokens[0].strip(), tokens[1].strip()))
            continue
        layer = _layer(tokens, lineno, where)
        if layer.id in layers:
            first = layers[layer.id].line
            raise InputError(f"{where}: layer {layer.id!r} is already defined on line {first}")
        layers[layer.id] = layer
    if not layers:
        raise InputError(f"{source}: no layer lines found")
    edges: list[tuple[str, str]] = []
    seen: set[tuple[str, str]] = set()
    duplicates = 0
    for lineno, a, b in raw_edges:
        for end in (a, b):
            if end not in layers:
                raise InputError(f"{source}:{lineno}: edge {a} -- {b} names unknown layer {end!r}")
        if a == b:
            raise InputError(f"{source}:{lineno}: edge {a} -- {b} joins a layer to itself")
        if (a, b) in seen:
            duplicates += 1
            continue
        seen.add((a, b))
        edges.append((a, b))
    warnings = [f"{duplicates} duplicate edge line(s) ignored"] if duplicates else []
    return layers, edges, warnings


def import_pipedream(
    source: str | Path,
    *,
    name: str | None = None,
    zero_input_time: bool = False,
) -> ImportResult:
    """Import a PipeDream profile (a graph.txt path) as a training-step placer.graph/v1."""
    path = Path(source)
    try:
        text = path.read_text()
    except OSError as exc:
        raise InputError(f"cannot read PipeDream profile {path}: {exc.strerror}") from None
    layers, edges, warnings = parse_profile(text, str(path))
    input_ms = sum(layer.forward_ms + layer.backward_ms for layer in layers.values() if layer.is_input)
    if input_ms > 0 and not zero_input_time:
        warnings.append(
            f"Input layer time ({input_ms:g} ms) is data loading, kept as compute; "
            "use zero_input_time (--zero-input-time) to drop it"
        )
    forward: list[dict[str, Any]] = []
    backward: list[dict[str, Any]] = []
    out_edges: list[dict[str, Any]] = []
    for layer in layers.values():
        zero = zero_input_time and layer.is_input
        forward.append({
            "id": layer.id,
            "kind": layer.kind,
            "time_ms": 0.0 if zero else layer.forward_ms,
            "memory_bytes": round(layer.parameter_bytes + layer.activation_bytes),
            "group": layer.id,
        })
        backward.append({
            "id": f"{layer.id}.bwd",
            "kind": f"{layer.kind}.bwd",
            "time_ms": 0.0 if zero else layer.backward_ms,
            "memory_bytes": 0,
            "group": layer.id,
        })
        out_edges.append({"src": layer.id, "dst": f"{layer.id}.bwd", "bytes": 0})
    for a, b in edges:
        nbytes = round(layers[a].activation_bytes)
        out_edges.append({"src": a, "dst": b, "bytes": nbytes})
        out_edges.append({"src": f"{b}.bwd", "dst": f"{a}.bwd", "bytes": nbytes})
    default_name = path.parent.name if path.stem == "graph" and path.parent.name else path.stem
    document = {
        "format": GRAPH_FORMAT,
        "name": name or default_name,
        "ops": forward + backward,
        "edges": out_edges,
    }
    return finish(document, warnings)
