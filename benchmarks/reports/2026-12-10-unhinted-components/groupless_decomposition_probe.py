"""groupless_decomposition_probe.py NAME SECS: the series decomposition of the problem without its colocation
groups (a relaxation: every op its own group) and its bound. NASNet cells: 26 cuts, 2 components, bound 2.0 ms."""
import sys, time
from cases import graph_document, problem
from placer.decompose import decompose, solve_decomposed
from placer.budget import Budget
from placer.bounds import bound_breakdown
name, secs = sys.argv[1], float(sys.argv[2])
gd = graph_document(name)
for o in gd["ops"]:
    o.pop("group", None)
p = problem(name, gd)
b = bound_breakdown(p)
print("groupless named bounds max", round(max(b.values()), 3), max(b, key=b.get), flush=True)
d = decompose(p)
print("cuts", len(d.cuts), "components", len(d.components), "dangling", len(d.dangling), flush=True)
t = time.perf_counter()
budget = Budget(secs, deterministic=True, threads=1)
a = solve_decomposed(p, d, budget, secs, None, on_step=None)
print(name, "bound", round(a.bound_ms, 4), "optimal comps", a.stats.decomposition_components_optimal, "of", len(d.components),
      "spent", round(budget.spent(), 1), "wall", round(time.perf_counter() - t, 1), "answer", a.schedule.makespan_ms if a.schedule else None, flush=True)
