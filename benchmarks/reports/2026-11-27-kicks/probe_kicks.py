"""Iterated local search (kicks) from a result: probe_kicks.py NAME RESULT SECS (the prototype of improve_by_moves(kicks=True))."""
import json, sys, time, math, random
from cases import problem, schedule_of
from placer.schedule import retime, solution_from_starts
from placer.local_search import improve_by_moves
from placer.neighbourhood import critical_path
from placer.repair import memory_overflow
from placer.heuristics import justify
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
p = problem(name)
cur = schedule_of(p, res)
t = time.perf_counter()
best, c = improve_by_moves(p, cur, math.inf, 3000, 0)
print(f"{time.perf_counter()-t:.1f}s ls {cur.makespan_ms:.4f} -> {best.makespan_ms:.4f}", flush=True)
rng = random.Random(1)
it = 0
while time.perf_counter() - t < secs:
    it += 1
    path = critical_path(p, best)
    groups = sorted({p.group[k] for k in path})
    device = list(best.solution.device)
    for _ in range(rng.randint(1, 3)):
        gi = rng.choice(groups)
        d = rng.choice(p.allowed[gi])
        for k in p.groups[gi]: device[k] = d
    if any(memory_overflow(p, device)): continue
    start = retime(p, solution_from_starts(p, device, best.start_ms))
    cand, c = improve_by_moves(p, start, math.inf, 600, it)
    if cand.makespan_ms < best.makespan_ms * (1 - 1e-9):
        best = cand
        print(f"{time.perf_counter()-t:.1f}s it {it} best {best.makespan_ms:.4f}", flush=True)
best2 = justify(p, best)
print("end", best.makespan_ms, best2.makespan_ms, "iters", it)
