"""What every importer returns, and the totals its sum checks and the CLI summary use."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from placer.schema import GraphSpec, parse_graph

__all__ = ["ImportResult", "GraphTotals", "totals", "finish"]


@dataclass(frozen=True)
class GraphTotals:
    """Sums over a placer.graph/v1 document (None when no op carries that quantity)."""

    ops: int
    edges: int
    time_ms: float | None
    flops: float | None
    bytes_accessed: float | None
    memory_bytes: int
    edge_bytes: int


@dataclass(frozen=True)
class ImportResult:
    """A validated placer.graph/v1 document and what the importer had to guess or drop.

    `warnings` are for the user (the CLI prints them): unknown op types costed by bytes,
    symbolic dimensions taken as 1, merged duplicate edges, and the like.
    """

    document: dict[str, Any]
    graph: GraphSpec
    warnings: list[str] = field(default_factory=list)

    @property
    def totals(self) -> GraphTotals:
        return totals(self.document)


def _sum_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return float(sum(present)) if present else None


def totals(document: dict[str, Any]) -> GraphTotals:
    """Op and edge counts, total time, FLOPs, bytes accessed, memory and edge bytes."""
    ops = document["ops"]
    edges = document.get("edges", [])
    return GraphTotals(
        ops=len(ops),
        edges=len(edges),
        time_ms=_sum_or_none([op.get("time_ms") for op in ops]),
        flops=_sum_or_none([op.get("flops") for op in ops]),
        bytes_accessed=_sum_or_none([op.get("bytes_accessed") for op in ops]),
        memory_bytes=sum(int(op.get("memory_bytes", 0)) for op in ops),
        edge_bytes=sum(int(e.get("bytes", 0)) for e in edges),
    )


def finish(document: dict[str, Any], warnings: list[str]) -> ImportResult:
    """Validate the document against placer.graph/v1 (an importer bug or a cyclic source fails here)."""
    return ImportResult(document=document, graph=parse_graph(document), warnings=list(warnings))
