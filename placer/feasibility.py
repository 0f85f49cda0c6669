"""Proofs of infeasibility that need no solver, each with a sentence a user can act on."""
from __future__ import annotations

from placer.model import Problem

__all__ = ["explain_infeasible"]


def _name(problem: Problem, g: int) -> str:
    ops = problem.groups[g]
    if problem.group_names[g] is None:
        return f"op {problem.ops[ops[0]]!r}"
    return f"group {problem.group_names[g]!r} ({len(ops)} ops)"


def explain_infeasible(problem: Problem) -> str | None:
    """Why no placement can exist, or None when these checks find no reason.

    Checks: a group larger than every device it may use; ops pinned to a device
    beyond its memory; all ops beyond the total memory.
    """
    caps = problem.capacity_bytes
    for g, allowed in enumerate(problem.allowed):
        need = problem.group_memory_bytes(g)
        room = [caps[d] for d in allowed]
        if all(c is not None and need > c for c in room):
            best = max(allowed, key=lambda d: caps[d] or 0)
            where = "the device it is pinned to" if len(allowed) == 1 else "the largest device it may use"
            return (
                f"{_name(problem, g)} needs {need} bytes but {where}, "
                f"{problem.devices[best]!r}, holds {caps[best]} bytes"
            )
    pinned = [0] * problem.n_devices
    for g, allowed in enumerate(problem.allowed):
        if len(allowed) == 1:
            pinned[allowed[0]] += problem.group_memory_bytes(g)
    for d, need in enumerate(pinned):
        if caps[d] is not None and need > caps[d]:
            return f"ops pinned to {problem.devices[d]!r} need {need} bytes, its capacity is {caps[d]} bytes"
    if all(c is not None for c in caps):
        total = sum(problem.memory_bytes)
        capacity = sum(c for c in caps if c is not None)
        if total > capacity:
            return f"the ops need {total} bytes in all, the devices hold {capacity} bytes in all"
    return None
