"""Fuzz: where the series decomposition sets bridges aside (placer.decompose._bridges), its bound
never exceeds the exact optimum (where CP-SAT proves one in 30 s; elsewhere never a schedule
found), its stitch never fails its checks, and the engine's answers are valid. Cases:
tests.test_decompose.bridge_fuzz_case (small training steps whose forward ops save activations
as ops of their own, on 2-3 GPUs). Run from the repository root:
PYTHONPATH=. python benchmarks/reports/2026-11-27-bridges/bridge_fuzz.py 0 150"""
import math
import sys

from placer.budget import Budget
from placer.decompose import decompose, solve_decomposed
from placer.engine import PlaceOptions, place
from placer.heuristics import heft
from placer.model import build_problem
from placer.schema import parse_graph, parse_hardware
from placer.validate import check_result
from tests.test_decompose import bridge_fuzz_case as case

bad = runs = skipped = 0
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    doc, hw_doc = case(seed)
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw)
    dec = decompose(p)
    if dec is None or not dec.bridges:
        skipped += 1
        print(seed, "no bridges", flush=True)
        continue
    answer = solve_decomposed(p, dec, Budget(5, deterministic=True, threads=1), 5, heft(p).solution)
    engine = place(g, hw, PlaceOptions(time_limit_s=4, deterministic=True, threads=1))
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=2, relative_gap=0))
    problems = []
    if answer.stitch_error:
        problems.append(f"stitch: {answer.stitch_error}")
    if engine.makespan_ms is None or check_result(g, hw, engine):
        problems.append(f"engine answer invalid: {check_result(g, hw, engine) if engine.makespan_ms else engine.status}")
    # a bound never exceeds the optimum, so never a schedule found (the optimum where proven)
    best = min(exact.makespan_ms, engine.makespan_ms or math.inf)
    if answer.bound_ms > best + 1e-6:
        problems.append(f"bound {answer.bound_ms:.4f} above a schedule of {best:.4f}")
    if engine.lower_bound_ms is not None and engine.lower_bound_ms > best + 1e-6:
        problems.append(f"engine bound {engine.lower_bound_ms:.4f} above a schedule of {best:.4f}")
    runs += 1
    bad += bool(problems)
    stitched = answer.schedule.makespan_ms if answer.schedule else None
    print(seed, p.n_ops, f"bridges {len(dec.bridges)} cuts {len(dec.cuts)} components {len(dec.components)} "
          f"bound {answer.bound_ms:.3f} stitched {stitched} exact {exact.makespan_ms:.3f} ({exact.status})",
          "BAD " + "; ".join(problems) if problems else "", flush=True)
print(f"runs {runs} skipped {skipped} bad {bad}")
