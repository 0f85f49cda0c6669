"""Seeds of memory-bound chains and training steps: the decomposition bound never above the exact optimum."""
import random, sys, dataclasses
sys.path.insert(0, '/work/main/tests')
from benchmarks.graphs import fully_connected_hardware, layered, training_step
from placer.budget import Budget
from placer.decompose import decompose, solve_decomposed, _forced_moves_ms
from placer.engine import PlaceOptions, place
from placer.heuristics import heft
from placer.model import build_problem
from placer.schema import parse_graph, parse_hardware

def case(seed):
    rng = random.Random(seed)
    if rng.random() < 0.5:
        k = rng.randint(4, 9)
        ops = [{"id": f"o{i}", "time_ms": round(rng.uniform(0.2, 3), 3), "memory_bytes": rng.randint(100, 400) * 10**6} for i in range(k)]
        edges = [{"src": f"o{i}", "dst": f"o{i+1}", "bytes": rng.choice([1, 2, 5, 10, 20]) * 10**6} for i in range(k - 1)]
        doc = {"format": "placer.graph/v1", "name": f"chain{seed}", "ops": ops, "edges": edges}
    else:
        doc = training_step(layered(rng.randint(3, 6), seed=seed, ccr=rng.choice([0.5, 1.0, 2.0])))
        for op in doc["ops"]:
            op["memory_bytes"] = rng.randint(100, 400) * 10**6
    n = rng.choice([2, 3])
    hw = fully_connected_hardware(n, link_gb_per_s=rng.choice([1.0, 5.0]), latency_us=rng.choice([0, 5]))
    total = sum(op["memory_bytes"] for op in doc["ops"])
    for d in hw["devices"]:
        d["memory_bytes"] = int(total / n * rng.uniform(1.05, 1.6))
    return doc, hw

bad = 0; nonzero = []
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    doc, hwd = case(seed)
    g, hw = parse_graph(doc), parse_hardware(hwd)
    p = build_problem(g, hw)
    dec = decompose(p)
    if dec is None: continue
    forced = _forced_moves_ms(p, dec)
    h = heft(p)
    if h is None: continue
    ans = solve_decomposed(p, dec, Budget(5, deterministic=True, threads=1), 5, h.solution)
    exact = place(g, hw, PlaceOptions(time_limit_s=30, threads=1, relative_gap=0))
    if exact.status != "optimal": print(seed, 'not proven', exact.status); continue
    ok = ans.bound_ms <= exact.makespan_ms * (1 + 1e-9) + 1e-9
    if forced > 0: nonzero.append(seed)
    if not ok: bad += 1
    print(seed, len(doc["ops"]), 'forced', round(forced, 3), 'bound', round(ans.bound_ms, 4), 'opt', round(exact.makespan_ms, 4), 'OK' if ok else f'VIOLATION {ans.bound_ms - exact.makespan_ms:.3g}', flush=True)
print('violations', bad, 'nonzero', nonzero)
