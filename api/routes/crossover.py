"""POST /v1/crossover: the hybrid DP x MP crossover calculator (placer.crossover/v1 in,
placer.crossover-result/v1 out). SU^M asked of the engine is solved in the worker pool."""
from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from api.compute import run_compute, unvalidated, validate_body
from api.deps import JobsDep, SettingsDep
from api.errors import LimitExceededError
from api.inputs import check_limits, check_time_limit
from api.jobs import final_answer
from api.parsed import ParsedBodyRoute
from api.routes import error_responses
from api.routes.placements import wait_for_job
from api.settings import Settings
from api.worker import finite
from placer.crossover import CrossoverConfig, run
from placer.crossover.engine_speedup import load_engine_graph, load_engine_hardware

__all__ = ["router"]

router = APIRouter(prefix="/v1/crossover", tags=["crossover"], route_class=ParsedBodyRoute)

_EXAMPLE_GIVEN = {
    "format": "placer.crossover/v1", "name": "gnmt", "devices": [1, 2, 4, 8, 16, 32, 64, 128, 256],
    "epochs": {"by_width": {"1": 1.6, "2": 1.6, "4": 1.5, "8": 1.5, "16": 1.5, "32": 1.55, "64": 1.7,
                            "128": 2.3, "256": 4.32}},
    "scaling_efficiency": 1.0, "mp_speedup": {"2": 1.15},
}
_EXAMPLE_ENGINE = {
    "format": "placer.crossover/v1", "name": "engine", "devices": [1, 2, 4, 8],
    "epochs": {"by_width": {"1": 10, "8": 12}}, "scaling_efficiency": {"table": {"2": 0.95, "4": 0.9, "8": 0.85}},
    "mp_speedup": {"engine": {"graph": {"ops": [{"id": "a", "time_ms": 1}, {"id": "b", "time_ms": 4},
                                                {"id": "c", "time_ms": 4}, {"id": "d", "time_ms": 1}],
                                        "edges": [{"src": "a", "dst": "b", "bytes": 1000},
                                                  {"src": "a", "dst": "c", "bytes": 1000},
                                                  {"src": "b", "dst": "d", "bytes": 1000},
                                                  {"src": "c", "dst": "d", "bytes": 1000}]},
                              "hardware": "dgx1_v100", "m": [2], "time_limit_s": 5}},
}

RawCrossoverConfig = unvalidated(CrossoverConfig, openapi_examples={
    "given": {"summary": "SU^M given (GNMT, paper Figure 5b)", "value": _EXAMPLE_GIVEN},
    "engine": {"summary": "SU^M computed by the placement engine", "value": _EXAMPLE_ENGINE}})


def _check_points(config: CrossoverConfig, settings: Settings) -> None:
    """The sweep's size (also counted on the raw body by api.sizes, before validation)."""
    limit = settings.max_crossover_points
    tables = {"devices": config.devices, config.epochs.field: config.epochs.points,
              "mp_speedup.given": config.mp_speedup.given}
    if config.scaling_efficiency.table is not None:
        tables["scaling_efficiency.table"] = config.scaling_efficiency.table
    for where, table in tables.items():
        if len(table) > limit:
            raise LimitExceededError(f"{where}: {len(table)} given, this service accepts at most {limit} "
                                     "(PLACER_MAX_CROSSOVER_POINTS)")


def _prepare(raw: object, settings: Settings) -> tuple[CrossoverConfig, JSONResponse | None]:
    """Validate and check the config (in a worker thread). With SU^M given, also compute and
    render the answer there; with engine solves, the config is ready for a worker process."""
    config = validate_body(CrossoverConfig, raw)
    _check_points(config, settings)
    if config.mp_speedup.engine is None:
        return config, JSONResponse(finite(run(config, None, None, False).to_dict()))
    _check_engine_inputs(config, settings)
    return config, None


def _check_engine_inputs(config: CrossoverConfig, settings: Settings) -> None:
    engine = config.mp_speedup.engine
    assert engine is not None
    check_time_limit(engine.time_limit_s, settings, "mp_speedup.engine.time_limit_s")
    if len(engine.m) > 8:
        raise LimitExceededError(f"mp_speedup.engine.m: {len(engine.m)} widths given, at most 8 solves per request")
    graph = load_engine_graph(engine, allow_files=False)
    hardware = load_engine_hardware(engine, allow_files=False)
    check_limits(graph, hardware, settings)


@router.post("", response_model=dict[str, Any], summary="DP x MP crossover",
             responses={200: {"description": "placer.crossover-result/v1"},
                        **error_responses(400, 401, 404, 413, 415, 422, 500, 503, 504)})
async def create_crossover(raw: RawCrossoverConfig, request: Request, settings: SettingsDep, jobs: JobsDep) -> Any:
    """For every total device count: DP-only speedup, the best N-way DP x M-way MP split, the eq. 6
    threshold, the crossover device count and device-count advice. SU^M comes from `mp_speedup.given`
    or is computed by the placement engine (`mp_speedup.engine`, inline graph or zoo model, preset or
    inline hardware; no file paths), each engine solve bounded by its time limit. At most
    PLACER_MAX_CROSSOVER_POINTS device counts, and as many points per table."""
    config, answer = await run_compute(request, _prepare, raw, settings)
    if answer is not None:
        return answer
    engine = config.mp_speedup.engine
    assert engine is not None
    summary = {"solver": engine.solver, "time_limit_s": engine.time_limit_s, "solves": len(engine.m),
               "name": config.name}
    job = jobs.submit("crossover", {"config": raw}, summary, persistent=False)
    record = await wait_for_job(job, request, jobs)
    return JSONResponse(final_answer(record))
