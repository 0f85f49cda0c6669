"""Hill climbing by run moves (best improvement, re-timed and resequenced) from a result: probe_run_moves.py NAME RESULT."""
import json, sys, time
from cases import problem, schedule_of
from placer.schedule import retime, solution_from_starts
from placer.neighbourhood import critical_path
from placer.heuristics import justify, resequence
from placer.repair import memory_overflow
name, res = sys.argv[1], sys.argv[2]
p = problem(name)
cur = schedule_of(p, res)
print("start", cur.makespan_ms)
t0 = time.perf_counter(); evals = 0
def evaluate(device, cur):
    global evals
    evals += 1
    a = retime(p, solution_from_starts(p, device, cur.start_ms))
    b = resequence(p, device)
    if b is not None and b.makespan_ms < a.makespan_ms: a = b
    return a
while True:
    path = critical_path(p, cur)
    dev = cur.solution.device
    segs = []  # list of lists of groups in path order
    for k in path:
        gk = p.group[k]
        if segs and dev[k] == segs[-1][0]:
            if gk not in segs[-1][1]: segs[-1][1].append(gk)
        else:
            segs.append((dev[k], [gk]))
    cands = []
    for i, (d, gs) in enumerate(segs):
        for j in (i - 1, i + 1):
            if 0 <= j < len(segs) and segs[j][0] != d:
                cands.append((gs, segs[j][0]))
                for kk in range(1, min(4, len(gs))):
                    cands.append((gs[:kk] if j == i - 1 else gs[-kk:], segs[j][0]))
    best = None
    for gs, d in cands:
        device = list(dev)
        for gi in gs:
            if d not in p.allowed[gi]: break
            for k in p.groups[gi]: device[k] = d
        else:
            if any(memory_overflow(p, device)): continue
            trial = evaluate(device, cur)
            if best is None or trial.makespan_ms < best.makespan_ms: best = trial
    if best is None or best.makespan_ms >= cur.makespan_ms * (1 - 1e-9):
        break
    cur = justify(p, best)
    print(f"{time.perf_counter()-t0:.1f}s evals {evals} -> {cur.makespan_ms:.4f} segs {len(segs)} cands {len(cands)}", flush=True)
print("end", cur.makespan_ms, evals, f"{time.perf_counter()-t0:.1f}s")
