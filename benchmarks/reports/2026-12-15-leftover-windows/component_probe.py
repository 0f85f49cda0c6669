"""One distinct component of a decomposed case solved alone, without a hint, deterministic:

    PYTHONPATH=. python benchmarks/reports/2026-12-15-leftover-windows/component_probe.py CASE C SECONDS MODE

MODE: plain (as the engine solves it), relaxed (placer.relax's equal links: default search, then the
lower-bound tree search from its answer), inter2 (CP-SAT's interleaved search, 2 workers), lnsonly.
Cases from /tmp/q/cases (../2026-11-26-windows-extend/dump_cases.py)."""
import json
import sys
import time
from pathlib import Path

from ortools.sat.python import cp_model

import placer.decompose as D
from placer.budget import Budget
from placer.model import build_problem
from placer.relax import symmetric_relaxation
from placer.schema import GraphSpec, HardwareSpec

name, c, secs, mode = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
solve = cp_model.CpSolver.solve


def varied(self, model, callback=None):
    if mode.startswith("inter"):
        self.parameters.interleave_search = True
        self.parameters.num_workers = int(mode[5:])
    elif mode == "lnsonly":
        self.parameters.use_lns_only = True
    return solve(self, model, callback)


cp_model.CpSolver.solve = varied
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
dec = D.decompose(p)
comp = dec.components[c]
budget = Budget(1e9, deterministic=True)
began = time.perf_counter()
if mode == "relaxed":
    relaxed = symmetric_relaxation(p)
    a = D._solve_component(relaxed, dec, comp, secs, budget, None, representatives=[0])
    print("default search", a.objective_ms, a.bound_ms, a.status, flush=True)
    a = D._solve_component(relaxed, dec, comp, secs, budget, a, representatives=[0], bound_search=True)
else:
    a = D._solve_component(p, dec, comp, secs, budget, None, representatives=D.orbit_representatives(p))
print(name, c, mode, secs, f"obj {a.objective_ms:.4f} bound {a.bound_ms:.4f}", a.status,
      f"work-s {budget.spent():.1f} wall {time.perf_counter() - began:.1f}")
