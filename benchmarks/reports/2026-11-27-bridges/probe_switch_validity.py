"""Every generated case with a priced switch (placer.decompose._switches): the decomposition bound
with and without the pricing against CP-SAT's exact answer (30 s). Usage: probe_switch_validity.py
chain|bridge FIRST LAST (cases tests.test_chain_loads.fuzz_case / tests.test_decompose.bridge_fuzz_case)"""
import sys, dataclasses
from tests.test_chain_loads import fuzz_case
from tests.test_decompose import bridge_fuzz_case
from placer.schema import parse_graph, parse_hardware
from placer.model import build_problem
from placer.decompose import decompose, solve_decomposed
from placer.budget import Budget
from placer.heuristics import heft
from placer.engine import PlaceOptions, place
kind, lo, hi = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
f = fuzz_case if kind == "chain" else bridge_fuzz_case
bad = runs = 0
for s in range(lo, hi):
    doc, hwd = f(s); g, hw = parse_graph(doc), parse_hardware(hwd); p = build_problem(g, hw); d = decompose(p)
    if not (d and d.switches): continue
    a = solve_decomposed(p, d, Budget(5, deterministic=True, threads=1), 5, heft(p).solution)
    d0 = dataclasses.replace(d, switches={})
    a0 = solve_decomposed(p, d0, Budget(5, deterministic=True, threads=1), 5, heft(p).solution)
    ex = place(g, hw, PlaceOptions(time_limit_s=30, threads=2, relative_gap=0))
    runs += 1
    flag = "BAD" if a.bound_ms > ex.makespan_ms + 1e-6 else ""
    bad += bool(flag)
    print(kind, s, p.n_ops, len(d.switches), f"bound {a.bound_ms:.4f} (unpriced {a0.bound_ms:.4f}) exact {ex.makespan_ms:.4f} {ex.status}", flag, flush=True)
print(kind, "runs", runs, "bad", bad)
