"""Old master vs master with windows vs exact optimum on small chains with updates."""
import sys
from placer.budget import Budget
from placer.chain_loads import chain_loads, ChainLoads
from placer.decompose import _solve_component, coupled_parts, decompose, orbit_representatives
from placer.engine import PlaceOptions, place
from placer.model import build_problem
from placer.schema import parse_graph, parse_hardware
from tests.test_chain_loads import fuzz_case
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    doc, hw_doc = fuzz_case(seed)
    n = sum(op["id"].startswith("f") and "_" not in op["id"] for op in doc["ops"])  # layers
    g, hw = parse_graph(doc), parse_hardware(hw_doc)
    p = build_problem(g, hw); dec = decompose(p)
    if dec is None: continue
    reps = orbit_representatives(p)
    answers = [_solve_component(p, dec, comp, 5, Budget(5, True, 1, 0), None, representatives=reps) for comp in dec.components]
    parts = coupled_parts(p, dec, answers, list(range(len(answers))), Budget(20, True, 1, 0), 20, reps)
    old = ChainLoads(*[getattr(parts, f) for f in ("cuts", "segments", "components", "bound_ms", "spread_bound_ms", "switched_bound_ms")])
    b_old = chain_loads(p, old, Budget(10, True, 1, 0), 10)
    b_new = chain_loads(p, parts, Budget(10, True, 1, 0), 10)
    if b_new is not None and b_old is not None and b_new > b_old + 1e-9:
        exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=2, relative_gap=0))
        print(seed, n, p.n_ops, len(dec.cuts), f"old {b_old:.3f} new {b_new:.3f} exact {exact.makespan_ms:.3f} {exact.status}",
              "BAD" if b_new > exact.makespan_ms + 1e-6 else "", flush=True)
