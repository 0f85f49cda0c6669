"""Size limits checked on the parsed JSON before any schema validation: a 100,000-op graph
is refused in milliseconds by counting, not after seconds of validating every op.

The counts are taken where the schemas would find them; anything of the wrong shape is left
to the schemas, which name it. The same limits are checked again on the validated documents
(api.inputs.check_limits), which also covers graphs and machines given by name.
"""
from __future__ import annotations

from typing import Any

from api.settings import Settings

__all__ = ["oversized"]


def _at(doc: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(key)
    return doc


def _problem_limits(doc: Any, prefix: str, settings: Settings) -> list[tuple[str, Any, int, str]]:
    """graph.ops, graph.edges, hardware.devices under `prefix` (a request or an engine spec)."""
    return [
        (f"{prefix}graph.ops", _at(doc, "graph", "ops"), settings.max_ops, "PLACER_MAX_OPS"),
        (f"{prefix}graph.edges", _at(doc, "graph", "edges"), settings.max_edges, "PLACER_MAX_EDGES"),
        (f"{prefix}hardware.devices", _at(doc, "hardware", "devices"), settings.max_devices, "PLACER_MAX_DEVICES"),
    ]


def _crossover_limits(doc: Any, settings: Settings) -> list[tuple[str, Any, int, str]]:
    points, env = settings.max_crossover_points, "PLACER_MAX_CROSSOVER_POINTS"
    mp = _at(doc, "mp_speedup")
    given = _at(mp, "given") if isinstance(mp, dict) and {"given", "engine"} & set(mp) else mp
    engine = _at(mp, "engine")
    return [
        ("devices", _at(doc, "devices"), points, env),
        ("epochs.by_width", _at(doc, "epochs", "by_width"), points, env),
        ("epochs.by_global_batch", _at(doc, "epochs", "by_global_batch"), points, env),
        ("scaling_efficiency.table", _at(doc, "scaling_efficiency", "table"), points, env),
        ("mp_speedup.given", given, points, env),
        *_problem_limits(engine, "mp_speedup.engine.", settings),
    ]


def oversized(path: str, doc: Any, settings: Settings) -> str | None:
    """The first limit the body of a request to `path` exceeds, as the sentence a 422 carries."""
    if path.rstrip("/") == "/v1/crossover":
        limits = _crossover_limits(doc, settings)
    elif path.rstrip("/") in ("/v1/placements", "/v1/simulations", "/v1/validations"):
        limits = _problem_limits(doc, "", settings)
    else:
        return None
    for where, value, limit, env in limits:
        if isinstance(value, (list, dict)) and len(value) > limit:
            return f"{where}: {len(value)} given, this service accepts at most {limit} ({env})"
    return None
