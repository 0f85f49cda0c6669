"""Speedup against devices for DP alone and each hybrid split, like the paper's Figure 5.

Drawn on a bare `Figure` with the Agg canvas: no pyplot, no global state, no display.
"""

from __future__ import annotations

from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import FixedLocator, NullFormatter, NullLocator

from placer.crossover.calculate import CrossoverReport

__all__ = ["figure", "plot_report"]

_MARKERS = "osD^vP*X"


def figure(report: CrossoverReport) -> Figure:
    """The Figure-5-style chart of a report."""
    fig = Figure(figsize=(7.5, 4.8), layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    devices = [r.devices for r in report.rows]
    ax.plot(devices, [r.dp_only.speedup for r in report.rows], "-o", color="black", label="DP only", zorder=3)
    for i, m in enumerate(sorted(report.mp_speedup_sources)):
        points = [(r.devices, o.speedup) for r in report.rows for o in r.hybrids if o.m == m]
        if not points:
            continue
        su = report.mp_speedup_sources[m]["speedup"]
        ax.plot(
            [g for g, _ in points],
            [s for _, s in points],
            "--" + _MARKERS[(i + 1) % len(_MARKERS)],
            label=f"hybrid: N-way DP x {m}-way MP ($SU^{{{m}}}$ = {su:.2f})",
        )
    for r in report.rows:
        gain = r.hybrid_gain
        best = r.best_hybrid
        if gain is not None and gain > 0 and best is not None:
            ax.annotate(
                f"{gain:+.1%}",
                (r.devices, best.speedup),
                textcoords="offset points",
                xytext=(0, 7),
                ha="center",
                fontsize=8,
            )
    if report.crossover_devices is not None:
        ax.axvline(report.crossover_devices, color="grey", linestyle=":", linewidth=1)
        ax.text(
            report.crossover_devices,
            0.02,
            f" crossover: {report.crossover_devices}",
            transform=ax.get_xaxis_transform(),
            color="grey",
            fontsize=8,
        )
    if len(devices) > 1 and devices[-1] / devices[0] >= 8:
        ax.set_xscale("log", base=2)
    ax.xaxis.set_major_locator(FixedLocator(devices))
    ax.xaxis.set_major_formatter(lambda x, _: f"{x:g}")
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.set_xlabel("devices (G = N x M)")
    ax.set_ylabel("training speedup over one device")
    top = max([r.dp_only.speedup for r in report.rows] + [o.speedup for r in report.rows for o in r.hybrids])
    ax.set_ylim(0, top * 1.12)
    ax.set_title(f"{report.name}: projected speedup, DP only vs hybrid DP x MP")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="upper left", fontsize=8)
    return fig


def plot_report(report: CrossoverReport, path: str | Path) -> list[Path]:
    """Write the chart as PNG and SVG beside each other (`x.png` -> `x.png` and `x.svg`)."""
    base = Path(path)
    if base.suffix.lower() in (".png", ".svg"):
        base = base.with_suffix("")
    fig = figure(report)
    written = []
    for suffix in (".png", ".svg"):
        out = base.parent / (base.name + suffix)
        fig.savefig(out, dpi=150)
        written.append(out)
    return written
