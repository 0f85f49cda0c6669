"""Pictures a person would rather look at than read: the Gantt chart of a schedule."""
from __future__ import annotations

from pathlib import Path

from placer.simulator import SimulationReport

__all__ = ["write_gantt"]


def write_gantt(report: SimulationReport, path: str | Path, title: str = "") -> None:
    """One row per device (ops) and per used link direction (transfers), time in ms."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devices = list(report.device_busy_ms)
    links = sorted(report.link_busy_ms)
    rows = devices + links
    row = {name: i for i, name in enumerate(rows)}
    height = max(2.5, 0.45 * len(rows) + 1.2)
    fig, ax = plt.subplots(figsize=(12, height))
    colors = plt.get_cmap("tab20")
    for n, (op, device) in enumerate(sorted(report.placement.items(), key=lambda kv: report.start_ms[kv[0]])):
        start, end = report.start_ms[op], report.end_ms[op]
        ax.barh(row[device], end - start, left=start, height=0.8, color=colors(n % 20), edgecolor="black", linewidth=0.3)
        if end - start > report.makespan_ms / 40:
            ax.text((start + end) / 2, row[device], op, ha="center", va="center", fontsize=6, clip_on=True)
    for t in report.transfers:
        for a, b, start, end in t.hops:
            ax.barh(row[f"{a}->{b}"], end - start, left=start, height=0.6, color="0.6", edgecolor="black", linewidth=0.3)
    ax.set_yticks(range(len(rows)), rows, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("time (ms)")
    ax.set_xlim(0, max(report.makespan_ms, 1e-9) * 1.01)
    ax.axvline(report.makespan_ms, color="red", linewidth=0.8)
    label = "with link contention" if report.contention else "no link contention"
    order = "solver's order" if report.policy == "order" else "FIFO dispatch"
    ax.set_title(f"{title}  makespan {report.makespan_ms:.3f} ms ({order}, {label})".strip())
    ax.grid(axis="x", linewidth=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
