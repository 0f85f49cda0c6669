"""Probe: pairs of heavy groups that share a device -> Jackson on their union; the smallest T whose
conflict graph {pairs with union bound > T} is n_devices-colourable is a lower bound."""
import json, sys, time, itertools
from pathlib import Path
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer import bounds as B

def colourable(problem, groups, conflicts):
    m = cp_model.CpModel()
    x = {(g, d): m.NewBoolVar("") for g in groups for d in problem.allowed[g]}
    for g in groups:
        m.AddExactlyOne(x[g, d] for d in problem.allowed[g])
    for a, b in conflicts:
        for d in set(problem.allowed[a]) & set(problem.allowed[b]):
            m.AddBoolOr([x[a, d].Not(), x[b, d].Not()])
    # symmetry: first group on device 0 if all interchangeable (skip: small)
    s = cp_model.CpSolver(); s.parameters.max_time_in_seconds = 10; s.parameters.num_workers = 1
    r = s.Solve(m)
    return r in (cp_model.OPTIMAL, cp_model.FEASIBLE), r

def union_ms(problem, c, groups):
    ops = [k for g in groups for k in problem.groups[g]]
    devs = set.intersection(*(set(problem.allowed[g]) for g in groups))
    if not devs or not problem.fit_together(set(groups)):
        return float('inf')
    times = {tuple(problem.time_ms[k][d] for k in ops) for d in devs}
    return min(B._preemptive_one_machine_ms([(c.head[k], t, c.tail[k]) for k, t in zip(ops, ts)]) for ts in times)

name = sys.argv[1]; K = int(sys.argv[2]) if len(sys.argv) > 2 else 40
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
t0 = time.perf_counter()
c = B.Costs.of(p)
named = B.bound_breakdown(p)
known = max(named.values())
heavy = sorted(range(len(p.groups)), key=lambda g: -B._group_work_ms(p, g))[:K]
single = max(union_ms(p, c, [g]) for g in heavy if len(p.groups[g]) > 0)
share = {}
for a, b in itertools.combinations(heavy, 2):
    share[a, b] = union_ms(p, c, [a, b])
t1 = time.perf_counter()
values = sorted({v for v in share.values() if v > known} | {known})
lo, hi = 0, len(values) - 1
# smallest T in values such that graph {share > T} colourable
best = None
while lo <= hi:
    mid = (lo + hi) // 2
    T = values[mid]
    ok, r = colourable(p, heavy, [k for k, v in share.items() if v > T])
    if ok:
        best = T; hi = mid - 1
    else:
        lo = mid + 1
t2 = time.perf_counter()
print(f"{name}: known {known:.4f} single {single:.4f} pairs-colouring {best:.4f} ({len(share)} pairs {t1-t0:.2f}s, colouring {t2-t1:.2f}s)")
if len(sys.argv) > 3:
    top = heavy[:12]
    for a in top:
        print(f"{(p.group_names[a] or str(a))[:18]:18s}", " ".join(f"{share.get((a,b), share.get((b,a), 0)):6.2f}" if a!=b else "   -  " for b in top))
