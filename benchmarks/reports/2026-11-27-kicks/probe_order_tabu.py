"""A tabu search on device orders and group moves from HEFT or a result: probe_order_tabu.py NAME ITERATIONS heft|RESULT."""
import json, sys, time, random
from cases import problem, schedule_of
from placer.schedule import Solution, retime, solution_from_starts
from placer.neighbourhood import critical_path
from placer.heuristics import heft
from placer.repair import memory_overflow
from placer.errors import SolutionCheckError

name = sys.argv[1]; iters = int(sys.argv[2]); start_from = sys.argv[3]
p = problem(name)
if start_from == "heft":
    cur = heft(p)
else:
    cur = schedule_of(p, start_from)
print("start", cur.makespan_ms, flush=True)
best = cur
rng = random.Random(0)
tabu = {}
t0 = time.perf_counter(); evals = 0
for it in range(iters):
    path = critical_path(p, cur)
    dev = cur.solution.device
    cands = []
    # blocks
    blocks = []; b = [path[0]]
    for a, c in zip(path, path[1:]):
        if dev[a] == dev[c]:
            b.append(c)
        else:
            blocks.append(b); b = [c]
    blocks.append(b)
    for b in blocks:
        if len(b) < 2: continue
        pairs = {(b[0], b[1]), (b[-2], b[-1])}
        for x, y in pairs:
            if any(p.edges[i].dst == y for i in p.succs[x]): continue
            cands.append(("swap", x, y))
    groups = sorted({p.group[k] for k in path})
    for gi in groups:
        here = dev[p.groups[gi][0]]
        for d in p.allowed[gi]:
            if d != here: cands.append(("move", gi, d))
    bestc = None
    for c in cands:
        if c[0] == "swap":
            _, x, y = c
            d = dev[x]
            order = [list(s) for s in cur.solution.order]
            seq = order[d]; i = seq.index(x)
            if seq[i+1] != y: continue
            seq[i], seq[i+1] = y, x
            sol = Solution(list(dev), order)
            attr = ("swap", y, x)
        else:
            _, gi, d = c
            device = list(dev)
            for k in p.groups[gi]: device[k] = d
            if any(memory_overflow(p, device)): continue
            sol = solution_from_starts(p, device, cur.start_ms)
            attr = ("move", gi, d)
        try:
            trial = retime(p, sol)
        except SolutionCheckError:
            continue
        evals += 1
        m = trial.makespan_ms
        is_tabu = tabu.get(attr, -1) >= it
        if is_tabu and m >= best.makespan_ms * (1 - 1e-9): continue
        key = (m, rng.random())
        if bestc is None or key < bestc[0]:
            bestc = (key, trial, c)
    if bestc is None:
        print("no move", it); break
    _, trial, c = bestc
    if c[0] == "swap":
        tabu[("swap", c[1], c[2])] = it + rng.randint(5, 12)
    else:
        tabu[("move", c[1], dev[p.groups[c[1]][0]])] = it + rng.randint(5, 12)
    cur = trial
    if cur.makespan_ms < best.makespan_ms * (1 - 1e-9):
        best = cur
        print(f"{it} {time.perf_counter()-t0:.1f}s evals {evals} best {best.makespan_ms:.4f} via {c[0]}", flush=True)
print("end", best.makespan_ms, "iters", it+1, "evals", evals, f"{time.perf_counter()-t0:.1f}s")
