"""Find the documents a user names: a file path, a preset or zoo name, or an inline object."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import hardware_graphs
from placer.errors import UnknownPresetError
from placer.schema import GraphSpec, HardwareSpec, load_json, parse_graph, parse_hardware

__all__ = ["resolve_hardware", "resolve_graph", "load_preset"]


def _presets() -> str:
    return ", ".join(hardware_graphs.preset_names()) or "none installed"


def load_preset(name: str) -> HardwareSpec:
    """A bundled hardware preset by name (file stem in hardware_graphs/)."""
    try:
        return parse_hardware(hardware_graphs.load_preset_document(name))
    except KeyError:
        raise UnknownPresetError(f"hardware: no preset named {name!r} (presets: {_presets()})") from None


def resolve_hardware(ref: str | Path | dict[str, Any] | HardwareSpec) -> HardwareSpec:
    """A hardware graph from a placer.hardware/v1 file, a preset name, or a document."""
    if isinstance(ref, HardwareSpec):
        return ref
    if isinstance(ref, dict):
        return parse_hardware(ref)
    path = Path(ref)
    if path.suffix == ".json" or path.exists():
        return parse_hardware(load_json(path))
    if str(ref) not in hardware_graphs.preset_names():
        raise UnknownPresetError(f"hardware: {str(ref)!r} is neither a file nor a preset (presets: {_presets()})")
    return load_preset(str(ref))


def resolve_graph(ref: str | Path | dict[str, Any] | GraphSpec) -> GraphSpec:
    """A dataflow graph from a placer.graph/v1 file or a document."""
    if isinstance(ref, GraphSpec):
        return ref
    if isinstance(ref, dict):
        return parse_graph(ref)
    return parse_graph(load_json(ref))
