"""Human-readable summaries of results, for the command line."""
from __future__ import annotations

from collections import Counter, defaultdict

from placer.schema import Baselines, GraphSpec, HardwareSpec, ResultSpec

__all__ = ["format_bytes", "format_summary"]


def format_bytes(n: float) -> str:
    """
    >>> format_bytes(1536), format_bytes(16e9)
    ('1.5 KiB', '14.9 GiB')
    """
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _ms(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.4g} ms"


def format_summary(result: ResultSpec, graph: GraphSpec, hardware: HardwareSpec) -> str:
    """Status, makespan, bound, gap, speedups, and per-device load and memory."""
    lines = [
        f"graph     {graph.name}: {len(graph.ops)} ops, {len(graph.edges)} edges",
        f"hardware  {hardware.name}: {len(hardware.devices)} devices, {len(hardware.switches)} switches, "
        f"{len(hardware.links)} links",
        f"status    {result.status} ({result.solver}, {result.solve_time_s:.2f} s)",
    ]
    if result.reason:
        lines.append(f"reason    {result.reason}")
    if result.makespan_ms is None:
        return "\n".join(lines)
    gap = f"{100 * result.gap:.2f}%" if result.gap is not None else "n/a"
    lines.append(f"makespan  {_ms(result.makespan_ms)}  (lower bound {_ms(result.lower_bound_ms)}, gap {gap})")
    baselines = result.baselines or Baselines()
    parts = []
    if result.speedup is not None:
        parts.append(f"{result.speedup:.3f}x vs one device ({_ms(result.single_device_ms)})")
    else:
        parts.append("the graph fits on no single device")
    heft_ms = baselines.heft_ms
    if heft_ms:
        parts.append(f"{heft_ms / result.makespan_ms:.3f}x vs HEFT ({_ms(heft_ms)})")
    cp_ms = baselines.critical_path_ms
    if cp_ms:
        parts.append(f"critical-path placement {_ms(cp_ms)}")
    lines.append("speedup   " + ", ".join(parts))
    sim = result.simulation
    if sim is not None:
        lines.append(
            f"simulated {_ms(sim.makespan_ms)} replayed; {_ms(sim.fifo_makespan_ms)} with FIFO "
            f"dispatch; {_ms(sim.contention_makespan_ms)} with link contention"
        )
    if result.splits is not None:
        from placer.split.pipeline import plan_summary

        lines += plan_summary(result)
    ops_on: Counter[str] = Counter(result.placement.values())
    for split in (result.splits or {}).values():
        ops_on.update(split.devices)
    busy: dict[str, float] = defaultdict(float)
    for entry in result.schedule:
        busy[entry.device] += entry.end_ms - entry.start_ms
    capacity = {d.id: d.memory_bytes for d in hardware.devices}
    lines.append(f"{'device':<14}{'ops':>6}{'busy':>12}{'util':>7}{'memory':>12}{'of':>12}")
    for d in hardware.devices:
        util = busy[d.id] / result.makespan_ms if result.makespan_ms else 0.0
        cap = capacity[d.id]
        lines.append(
            f"{d.id:<14}{ops_on[d.id]:>6}{busy[d.id]:>9.3f} ms{100 * util:>6.1f}%"
            f"{format_bytes(result.memory_bytes.get(d.id, 0)):>12}{format_bytes(cap) if cap else 'unlimited':>12}"
        )
    return "\n".join(lines)
