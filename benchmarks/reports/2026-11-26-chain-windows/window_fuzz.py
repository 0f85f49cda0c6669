"""Old master vs master with windows vs exact optimum on small chains with updates."""
import random, sys
from benchmarks.graphs import fully_connected_hardware
from placer.budget import Budget
from placer.chain_loads import chain_loads, ChainLoads
from placer.decompose import _solve_component, coupled_parts, decompose, orbit_representatives
from placer.engine import PlaceOptions, place
from placer.model import build_problem
from placer.schema import parse_graph, parse_hardware
from tests.test_chain_loads import LINE, chain_with_updates
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    rng = random.Random(1000 + seed)
    hw_doc = [fully_connected_hardware(2, link_gb_per_s=rng.choice([0.5, 1.0, 4.0]), latency_us=0),
              fully_connected_hardware(3, link_gb_per_s=rng.choice([1.0, 2.0]), latency_us=0), LINE][seed % 3]
    n = rng.randint(4, 7)
    doc = chain_with_updates(n, seed, branch_every=rng.choice([0, 2, 3]))
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
