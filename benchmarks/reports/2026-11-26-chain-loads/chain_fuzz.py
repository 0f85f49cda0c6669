"""Fuzz: the chain-loads bound (placer.chain_loads) never above the exact optimum, on small training
chains with weight updates and side branches (2-3 GPUs). Run from the repository root:
PYTHONPATH=. python benchmarks/reports/2026-11-26-chain-loads/chain_fuzz.py 0 150"""
import sys
from placer.budget import Budget
from placer.chain_loads import chain_loads
from placer.decompose import _solve_component, coupled_parts, decompose, orbit_representatives
from placer.engine import PlaceOptions, place
from placer.model import build_problem
from placer.schema import parse_graph, parse_hardware
from tests.test_chain_loads import fuzz_case
bad = rises = runs = 0
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    doc, hw_doc = fuzz_case(seed)
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw); dec = decompose(p)
    if dec is None:
        continue
    reps = orbit_representatives(p)
    answers = [_solve_component(p, dec, comp, 5, Budget(5, True, 1, 0), None, representatives=reps) for comp in dec.components]
    parts = coupled_parts(p, dec, answers, list(range(len(answers))), Budget(20, True, 1, 0), 20, reps)
    base = sum(p.min_time_ms(c) for c in dec.cuts) + sum(parts.bound_ms)
    bound = chain_loads(p, parts, Budget(10, True, 1, 0), 10)
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=2, relative_gap=0))
    if exact.status != "optimal" or bound is None:
        print(seed, "skip", exact.status, bound, flush=True); continue
    runs += 1
    rises += bound > base + 1e-9
    flag = ""
    if bound > exact.makespan_ms + 1e-6:
        bad += 1; flag = "BAD"
    print(seed, p.n_ops, len(dec.components), f"base {base:.3f} chain {bound:.3f} exact {exact.makespan_ms:.3f}", flag, flush=True)
print(f"runs {runs} rises {rises} bad {bad}")
