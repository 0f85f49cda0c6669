"""Probe: tabu search on the per-device orders of a result's placement (N5-style swaps on
critical blocks, evaluated by re-timing). tabu.py NAME RESULT.json EVALS"""
import json, sys, time, itertools, random
from probe_common import case_and_incumbent
from placer.schedule import Solution, retime
from placer.errors import SolutionCheckError
from placer.neighbourhood import critical_path

name, res, evals = sys.argv[1], sys.argv[2], int(sys.argv[3])
p, cur, r = case_and_incumbent(name, res)
device = cur.solution.device
print("incumbent", r["makespan_ms"], "retimed", cur.makespan_ms, "lb", r.get("lower_bound_ms"), flush=True)


def blocks(s):
    path = critical_path(p, s)
    pos = {}
    for d, seq in enumerate(s.solution.order):
        for i, k in enumerate(seq):
            pos[k] = i
    out, run = [], [path[0]]
    for a, b in itertools.pairwise(path):
        if device[a] == device[b] and pos[b] == pos[a] + 1:
            run.append(b)
        else:
            out.append(run); run = [b]
    out.append(run)
    return out, pos


def swapped(s, a, b):
    order = [list(seq) for seq in s.solution.order]
    d = device[a]
    i, j = order[d].index(a), order[d].index(b)
    order[d][i], order[d][j] = order[d][j], order[d][i]
    try:
        return retime(p, Solution(device=device, order=order))
    except SolutionCheckError:
        return None


def moved(s, a, to_after):
    """op a moved to just after op to_after (same device); or to the front if to_after None."""
    d = device[a]
    seq = [k for k in s.solution.order[d] if k != a]
    i = 0 if to_after is None else seq.index(to_after) + 1
    seq.insert(i, a)
    order = [list(q) for q in s.solution.order]
    order[d] = seq
    try:
        return retime(p, Solution(device=device, order=order))
    except SolutionCheckError:
        return None


rng = random.Random(0)
best = cur
tabu = {}
it = used = 0
t0 = time.time()
while used < evals:
    it += 1
    bl, pos = blocks(cur)
    cands = []
    for b in bl:
        if len(b) < 2:
            continue
        for x, y in itertools.pairwise(b):
            if not any(p.edges[i].dst == y for i in p.succs[x]):
                cands.append(("swap", x, y))
        if len(b) > 2:
            # N7-like: first op to after block's others, last op before
            cands.append(("move", b[0], b[-1]))
            d = device[b[0]]
            q = cur.solution.order[d]
            cands.append(("move", b[-1], q[pos[b[0]] - 1] if pos[b[0]] > 0 else None))
    bestn = None
    for kind, a, b in cands:
        key = (kind, a, b)
        t = swapped(cur, a, b) if kind == "swap" else moved(cur, a, b)
        used += 1
        if t is None:
            continue
        is_tabu = tabu.get((a, b), -1) >= it
        if is_tabu and t.makespan_ms >= best.makespan_ms * (1 - 1e-9):
            continue
        if bestn is None or t.makespan_ms < bestn[0].makespan_ms:
            bestn = (t, a, b)
    if bestn is None:
        break
    cur, a, b = bestn
    tabu[(b, a)] = it + 8 + rng.randint(0, 4)
    tabu[(a, b)] = it + 2
    if cur.makespan_ms < best.makespan_ms * (1 - 1e-9):
        best = cur
        print(f"it {it} evals {used} best {best.makespan_ms:.4f} t {time.time()-t0:.1f}", flush=True)
print("final", round(best.makespan_ms, 4), "iters", it, "evals", used, f"{time.time()-t0:.1f}s")
