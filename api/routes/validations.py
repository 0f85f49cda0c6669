"""POST /v1/validations: check a result document against its graph and hardware."""
from __future__ import annotations

from fastapi import APIRouter, Request

from api.compute import run_compute, unvalidated, validate_body
from api.deps import SettingsDep
from api.inputs import check_limits, resolve_hardware_ref
from api.parsed import ParsedBodyRoute
from api.routes import error_responses
from api.schemas import ValidationReply, ValidationRequest
from api.settings import Settings
from placer.validate import check_result

__all__ = ["router"]

router = APIRouter(prefix="/v1/validations", tags=["validations"], route_class=ParsedBodyRoute)

RawValidationRequest = unvalidated(ValidationRequest)


def _validate(raw: object, settings: Settings) -> ValidationReply:
    body = validate_body(ValidationRequest, raw)
    hardware = resolve_hardware_ref(body.hardware)
    check_limits(body.graph, hardware, settings)
    violations = check_result(body.graph, hardware, body.result)
    return ValidationReply(valid=not violations, status=body.result.status, violations=violations)


@router.post("", response_model=ValidationReply, summary="Check a result",
             responses=error_responses(400, 401, 404, 413, 415, 422))
async def create_validation(raw: RawValidationRequest, request: Request, settings: SettingsDep) -> ValidationReply:
    """Every rule of DESIGN.md "A result is valid when" that the result breaks, one sentence each.
    A broken result is a 200 answer with `valid: false`; only unreadable input is 4xx."""
    return await run_compute(request, _validate, raw, settings)
