"""placer: optimal device placement for deep-learning training steps.

    >>> from placer import place, PlaceOptions, resolve_graph, resolve_hardware   # doctest: +SKIP
    >>> result = place(resolve_graph("graph.json"), resolve_hardware("dgx1_v100_quad"))  # doctest: +SKIP

Data flows one way: JSON -> `placer.schema` -> `placer.model` -> heuristics and
`placer.formulations` -> `solvers` back ends -> `placer.schedule.retime` ->
`placer.validate` + `placer.simulator` -> placer.result/v1.
"""
from __future__ import annotations

from placer.engine import PlaceOptions, Progress, available_solvers, place
from placer.errors import InputError, PlacerError, SolutionCheckError
from placer.resolve import resolve_graph, resolve_hardware
from placer.schema import GraphSpec, HardwareSpec, ResultSpec, parse_graph, parse_hardware
from placer.simulator import simulate
from placer.validate import check_result

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
