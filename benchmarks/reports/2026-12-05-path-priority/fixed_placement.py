"""Probe (twenty-seventh session): CP-SAT with every group fixed where `dev` puts it, the order free:
the exact schedule of a placement (hint: resequenced and justified)."""
import sys

from placer.heuristics import resequence, justify
from placer.formulations.cpsat_model import build_cpsat
from placer.schedule import retime
from solvers.registry import get_backend, Limits
def fixed_schedule(p, dev, seconds, hint=None):
    s = hint or justify(p, resequence(p, dev))
    f = build_cpsat(p, s, 0.0, symmetry_breaking=False)
    m = f.model
    for g, lits in enumerate(f.presence):
        d = dev[p.groups[g][0]]
        m.add(lits[d] == 1)
    run, solver = get_backend('cpsat').solve(m, Limits(seconds, threads=2))
    sched = retime(p, f.decode(solver.value, p)) if run.has_solution else s
    return sched.makespan_ms, f.lower_bound_ms(run.bound) if run.bound is not None else None, run.status
