"""Hardware presets: one placer.hardware/v1 JSON file per machine, named by its file stem.

The files ship inside the installed package, so the CLI and the service find them after
`pip install`. Sources of every number are in README.md beside them.
"""
from __future__ import annotations

import json
from importlib import resources
from typing import Any

__all__ = ["preset_names", "load_preset_document"]


def preset_names() -> list[str]:
    """The stems of every bundled preset, sorted."""
    root = resources.files(__name__)
    return sorted(p.name[: -len(".json")] for p in root.iterdir() if p.name.endswith(".json"))


def load_preset_document(name: str) -> dict[str, Any]:
    """The raw JSON document of preset `name`; KeyError when there is none."""
    if name not in preset_names():
        raise KeyError(name)
    return json.loads(resources.files(__name__).joinpath(f"{name}.json").read_text())
