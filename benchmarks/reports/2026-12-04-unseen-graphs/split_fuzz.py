"""Seeds of tests/test_decompose.memory_split_case (memory-bound chains and training steps): the
decomposition bound never above the exact optimum. PYTHONPATH=. python split_fuzz.py FIRST END"""
import random, sys, dataclasses
from placer.budget import Budget
from placer.decompose import decompose, solve_decomposed, _forced_moves_ms
from placer.engine import PlaceOptions, place
from placer.heuristics import heft
from placer.model import build_problem
from placer.schema import parse_graph, parse_hardware
from tests.test_decompose import memory_split_case

bad = 0; nonzero = []
for seed in range(int(sys.argv[1]), int(sys.argv[2])):
    doc, hwd = memory_split_case(seed)
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
