"""Deterministic engine run whose chosen component gap rounds start afresh, without a hint:

    PYTHONPATH=. python benchmarks/reports/2026-12-15-leftover-windows/restart_probe.py CASE SECONDS ROUNDS [pinned]

ROUNDS: which non-relaxed rounds of each component (1-based, comma-separated) restart. With `pinned`
the restart keeps the groups of the component's entry and exit cuts on the devices its answer has
them on, and its bound is dropped (a restriction)."""
import json
import sys
from pathlib import Path

import placer.decompose as D
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec

name, secs, fresh = sys.argv[1], float(sys.argv[2]), {int(x) for x in sys.argv[3].split(",") if x}
pinned = sys.argv[4:] == ["pinned"]
solve_round, rounds = D._solve_round, {}


def round_(shared, c, relaxed, seconds, budget, hint):
    if not relaxed:
        rounds[c] = rounds.get(c, 0) + 1
        if rounds[c] in fresh:
            p, comp = shared.problem, shared.dec.components[c]
            cut_groups = {p.group[k] for _, _, entry, exit_ in D._local_segments(shared.dec, comp)
                          for k in (entry, exit_) if k is not None}
            fixed = {g: hint.device_of_group[g] for g in cut_groups} if pinned else None
            a = D._solve_component(p, shared.dec, comp, seconds, budget, None, fixed,
                                   representatives=shared.representatives)
            print(f"restart c{c}: obj {a.objective_ms:.4f} bound {a.bound_ms:.4f} (had {hint.objective_ms:.4f})",
                  flush=True)
            if pinned:
                a.bound_ms, a.optimal = hint.bound_ms, False
            return a
    a = solve_round(shared, c, relaxed, seconds, budget, hint)
    print(f"round c{c} relaxed={relaxed} limit {seconds:.1f}: obj {a.objective_ms:.4f} bound {a.bound_ms:.4f}",
          flush=True)
    return a


D._solve_round = round_
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True))
s = r.stats
print("END", name, sys.argv[3:], f"{r.makespan_ms:.4f} {r.lower_bound_ms:.4f} gap {100 * r.gap:.2f}%",
      "parts", s.decomposition_parts_ms, "re-fits", s.decomposition_refitted_components)
