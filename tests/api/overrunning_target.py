"""A worker target for tests/api/test_service_deadline.py: the real solve (engine, CBC) given
twice the time limit the service enforces, an engine that overruns its limit, for the
service's own deadline (the safety net) to cut. The MILP starts at once (no staged
heuristic) and the solver libraries are imported before the worker says it is ready."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from api.solve import progress_event, warm_up
from placer.engine import PlaceOptions, Strategy, place
from placer.schema import parse_graph, parse_hardware

__all__ = ["overrunning_solve", "warm_up"]


def overrunning_solve(request: dict[str, Any], emit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    options = dict(request.get("options") or {})
    options["time_limit_s"] = 2 * float(options.get("time_limit_s", 10.0))
    result = place(parse_graph(request["graph"]), parse_hardware(request["hardware"]),
                   PlaceOptions.model_validate(options), progress=lambda p: emit(progress_event(p)),
                   strategy=Strategy(stages_max_s=0.0))
    return result.model_dump(mode="json")
