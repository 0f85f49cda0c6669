"""Importers: models and profiles from other tools as placer.graph/v1 documents.

One module per source format: `onnx_model` (ONNX, analytic costs), `torch_model` (PyTorch via
torch.export, analytic costs), `pipedream` (PipeDream profiler graph.txt, profiled times) and
`msr` (msr-fiddle/dnn-partitioning JSON, profiled times). Each returns an `ImportResult`:
the validated document plus warnings about what it had to guess. The ONNX and PyTorch
importers load their framework only when called.
"""
from __future__ import annotations

from collections.abc import Callable
from importlib import import_module
from typing import Any

from placer.errors import InputError
from placer.importers.result import GraphTotals, ImportResult, totals

__all__ = ["KINDS", "ImportResult", "GraphTotals", "totals", "importer", "import_graph"]

# kind -> (module, function)
_IMPORTERS: dict[str, tuple[str, str]] = {
    "onnx": ("placer.importers.onnx_model", "import_onnx"),
    "torch": ("placer.importers.torch_model", "import_torch"),
    "pipedream": ("placer.importers.pipedream", "import_pipedream"),
    "msr": ("placer.importers.msr", "import_msr"),
}
KINDS = tuple(_IMPORTERS)


def importer(kind: str) -> Callable[..., ImportResult]:
    """The import function for `kind` (one of KINDS)."""
    if kind not in _IMPORTERS:
        raise InputError(f"unknown import kind {kind!r}; known kinds: {', '.join(KINDS)}")
    module, function = _IMPORTERS[kind]
    return getattr(import_module(module), function)


def import_graph(kind: str, source: Any, **options: Any) -> ImportResult:
    """Import `source` with the importer for `kind`; options go to that importer."""
    return importer(kind)(source, **options)
