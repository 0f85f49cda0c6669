"""Pictures a person would rather look at than read: the Gantt chart of a schedule."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from placer.simulator import SimulationReport
from placer.trace import direction

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from placer.schema import GraphSpec

__all__ = ["STYLE", "gantt_figure", "write_gantt"]

# How each part of a training step is drawn: backward ops hatched in a darker shade, so
# forward and backward read apart in black and white too.
STYLE: dict[str, dict[str, Any]] = {
    "forward": {"color": "#6baed6", "hatch": None, "label": "forward op"},
    "backward": {"color": "#fd8d3c", "hatch": "///", "label": "backward op"},
    "update": {"color": "#74c476", "hatch": "..", "label": "weight update"},
    "transfer": {"color": "0.6", "hatch": None, "label": "transfer (per link hop)"},
}


def write_gantt(report: SimulationReport, path: str | Path, title: str = "",
                graph: GraphSpec | None = None) -> None:
    """Write the Gantt chart (gantt_figure) as a PNG."""
    import matplotlib.pyplot as plt

    fig = gantt_figure(report, title, graph)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def gantt_figure(report: SimulationReport, title: str = "", graph: GraphSpec | None = None) -> Figure:
    """One row per device (ops) and per used link direction (transfers), time in ms, with a
    legend; `graph` gives op kinds, which tell backward and update ops apart where ids do not.
    The caller closes the figure (matplotlib.pyplot.close)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    kinds = {op.id: op.kind for op in graph.ops} if graph is not None else {}
    devices = list(report.device_busy_ms)
    links = sorted(report.link_busy_ms)
    rows = devices + links
    row = {name: i for i, name in enumerate(rows)}
    height = max(2.5, 0.45 * len(rows) + 1.6)
    fig, ax = plt.subplots(figsize=(12, height))
    drawn: set[str] = set()
    for op, device in sorted(report.placement.items(), key=lambda kv: (report.start_ms[kv[0]], kv[0])):
        start, end = report.start_ms[op], report.end_ms[op]
        part = direction(op, kinds.get(op))
        style = STYLE[part]
        drawn.add(part)
        ax.barh(row[device], end - start, left=start, height=0.8, color=style["color"], hatch=style["hatch"],
                edgecolor="black", linewidth=0.3)
        if end - start > report.makespan_ms / 40:
            ax.text((start + end) / 2, row[device], op, ha="center", va="center", fontsize=6, clip_on=True)
    for t in report.transfers:
        for a, b, start, end in t.hops:
            drawn.add("transfer")
            ax.barh(row[f"{a}->{b}"], end - start, left=start, height=0.6, color=STYLE["transfer"]["color"],
                    edgecolor="black", linewidth=0.3)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_xlim(0, max(report.makespan_ms, 1e-9) * 1.01)
    ax.axvline(report.makespan_ms, color="red", linewidth=0.8)
    handles: list[Any] = [Patch(facecolor=s["color"], hatch=s["hatch"], edgecolor="black", linewidth=0.3,
                                label=s["label"]) for part, s in STYLE.items() if part in drawn]
    handles.append(Line2D([0], [0], color="red", linewidth=0.8, label=f"makespan {report.makespan_ms:.4g} ms"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.12 * 2.5 / height - 0.06),
              ncol=len(handles), fontsize=7, frameon=False)
    label = "with link contention" if report.contention else "no link contention"
    order = "solver's order" if report.policy == "order" else "FIFO dispatch"
    ax.set_title(f"{title}  makespan {report.makespan_ms:.3f} ms ({order}, {label})".strip())
    ax.grid(axis="x", linewidth=0.3)
    fig.tight_layout()
    return fig
