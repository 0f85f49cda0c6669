"""How often a solve tells its caller something: the longest silence between progress events,
the phases reported, and repeated lines (a repeat that is not a heartbeat is a bug).

    python -m benchmarks.progress                       # bert_base on dgx1_v100, 30 s, cpsat
    python -m benchmarks.progress --model resnet50 --hardware dgx1_v100 --time-limit 20 --solver highs

Timing targets live here, never in unit tests: `placer.progress.HEARTBEAT_S` (2 s) is the
target, so the longest silence should stay close to it on any load.
"""
from __future__ import annotations

import argparse
import json
import time
from itertools import pairwise
from typing import Any

from placer import zoo
from placer.engine import PlaceOptions, place
from placer.progress import HEARTBEAT_S, Progress
from placer.resolve import resolve_hardware
from placer.schema import parse_graph


def measure(model: str, hardware: str, time_limit_s: float, solver: str, threads: int, batch: int) -> dict[str, Any]:
    graph = parse_graph(zoo.build(model, batch))
    machine = resolve_hardware(hardware)
    seen: list[tuple[float, Progress]] = []
    began = time.monotonic()
    result = place(graph, machine, PlaceOptions(solver=solver, time_limit_s=time_limit_s, threads=threads),
                   progress=lambda p: seen.append((time.monotonic() - began, p)))
    ended = time.monotonic() - began
    stamps = [0.0] + [t for t, _ in seen] + [ended]
    lines = [(p.phase, p.message, p.incumbent_ms, p.bound_ms) for _, p in seen if not p.heartbeat]
    return {
        "model": model, "hardware": hardware, "solver": solver, "time_limit_s": time_limit_s, "threads": threads,
        "wall_s": round(ended, 3), "status": result.status, "makespan_ms": result.makespan_ms,
        "events": len(seen), "heartbeats": sum(p.heartbeat for _, p in seen),
        "longest_silence_s": round(max(b - a for a, b in pairwise(stamps)), 3),
        "heartbeat_target_s": HEARTBEAT_S,
        "repeated_lines": sum(a == b for a, b in pairwise(lines)),
        "phases": list(dict.fromkeys(p.phase for _, p in seen)),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="bert_base")
    ap.add_argument("--batch", type=int, default=zoo.DEFAULT_BATCH)
    ap.add_argument("--hardware", default="dgx1_v100")
    ap.add_argument("--time-limit", type=float, default=30.0)
    ap.add_argument("--solver", default="cpsat")
    ap.add_argument("--threads", type=int, default=2)
    args = ap.parse_args(argv)
    print(json.dumps(measure(args.model, args.hardware, args.time_limit, args.solver, args.threads, args.batch),
                     indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
