"""GET /v1/hardware-graphs, GET /v1/hardware-graphs/{name}: the bundled machine presets."""
from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

import hardware_graphs
from api.inputs import resolve_hardware_ref
from api.routes import error_responses
from api.schemas import PresetSummary
from placer.schema import HardwareSpec

__all__ = ["router"]

router = APIRouter(prefix="/v1/hardware-graphs", tags=["hardware"])


@router.get("", response_model=list[PresetSummary], summary="List the hardware presets",
            responses=error_responses(401))
def list_presets() -> list[PresetSummary]:
    rows = []
    for name in hardware_graphs.preset_names():
        spec = resolve_hardware_ref(name)
        rows.append(PresetSummary(name=name, description=spec.description or "", devices=len(spec.devices),
                                  kinds=list(dict.fromkeys(d.kind for d in spec.devices)),
                                  switches=len(spec.switches), links=len(spec.links)))
    return rows


@router.get("/{name}", response_model=HardwareSpec, response_model_exclude_none=True,
            summary="One preset as placer.hardware/v1", responses=error_responses(401, 404, 422))
def get_preset(name: Annotated[str, Path(max_length=128, examples=["dgx1_v100"])]) -> HardwareSpec:
    return resolve_hardware_ref(name)
