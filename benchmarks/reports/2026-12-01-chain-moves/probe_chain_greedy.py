"""Chain moves alone from an engine answer (first improvement, the critical path recomputed after
each accepted move), each candidate re-timed in the answer's order or resequenced:
probe_chain_greedy.py NAME RESULT.json SECONDS [retimed|resequenced]. Run from the repository root
with PYTHONPATH=. and ../2026-11-30-group-windows (probe_common)."""
import random
import sys
import time

from probe_common import case_and_incumbent

from placer.heuristics import resequence
from placer.local_search import _Chains, _placed
from placer.neighbourhood import critical_path
from placer.repair import memory_overflow
from placer.schedule import retime, solution_from_starts

name, result_path, seconds, how = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
p, current, _ = case_and_incumbent(name, result_path)
chains = _Chains(p)
print(f"{len(chains.chains)} chains holding {sum(map(len, chains.chains))} of {len(p.groups)} groups; "
      f"start {current.makespan_ms:.4f} ms", flush=True)
t0, evaluations, rng = time.time(), 0, random.Random(0)
while time.time() - t0 < seconds:
    groups = sorted({p.group[k] for k in critical_path(p, current)})
    rng.shuffle(groups)
    device, improved = current.solution.device, False
    for chain, d in chains.moves(groups):
        if all(device[p.groups[g][0]] == d for g in chain):
            continue
        trial = _placed(p, device, chain, d)
        if any(memory_overflow(p, trial)):
            continue
        evaluations += 1
        s = resequence(p, trial) if how == "resequenced" else retime(p, solution_from_starts(p, trial, current.start_ms))
        if s is not None and s.makespan_ms < current.makespan_ms * (1 - 1e-9):
            current, improved = s, True
            break
        if time.time() - t0 > seconds:
            break
    if not improved:
        break
print(f"{how}: {current.makespan_ms:.4f} ms after {evaluations} evaluations, {time.time() - t0:.0f} s")
