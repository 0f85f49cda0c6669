"""placer: optimal device placement for deep-learning training steps.

    >>> from placer import place, PlaceOptions, resolve_graph, resolve_hardware   # doctest: +SKIP
    >>> result = place(resolve_graph("graph.json"), resolve_hardware("dgx1_v100_quad"))  # doctest: +SKIP

Data flows one way: JSON -> `placer.schema` -> `placer.model` -> heuristics and
`placer.formulations` -> `solvers` back ends -> `placer.schedule.retime` ->
`placer.validate` + `placer.simulator` -> placer.result/v1.
"""
from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from placer.engine import PlaceOptions, Progress, available_solvers, place
    from placer.errors import InputError, PlacerError, SolutionCheckError
    from placer.resolve import resolve_graph, resolve_hardware
    from placer.schema import GraphSpec, HardwareSpec, ResultSpec, parse_graph, parse_hardware
    from placer.simulator import simulate
    from placer.validate import check_result

# Imported on first use (PEP 562), so that `placer.errors`, the root of the one error tree,
# imports without the engine: the solver back ends derive their errors from it.
_LAZY = {
    "PlaceOptions": "placer.engine", "Progress": "placer.engine", "available_solvers": "placer.engine",
    "place": "placer.engine",
    "InputError": "placer.errors", "PlacerError": "placer.errors", "SolutionCheckError": "placer.errors",
    "resolve_graph": "placer.resolve", "resolve_hardware": "placer.resolve",
    "GraphSpec": "placer.schema", "HardwareSpec": "placer.schema", "ResultSpec": "placer.schema",
    "parse_graph": "placer.schema", "parse_hardware": "placer.schema",
    "simulate": "placer.simulator",
    "check_result": "placer.validate",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'placer' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__version__ = "0.1.0"

__all__ = [
    "place",
    "PlaceOptions",
    "Progress",
    "available_solvers",
    "simulate",
    "check_result",
    "resolve_graph",
    "resolve_hardware",
    "parse_graph",
    "parse_hardware",
    "GraphSpec",
    "HardwareSpec",
    "ResultSpec",
    "PlacerError",
    "InputError",
    "SolutionCheckError",
]
