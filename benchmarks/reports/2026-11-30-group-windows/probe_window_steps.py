import json, sys, random
from probe_common import case_and_incumbent
from placer.schedule import Solution, retime
from placer.budget import Budget
import placer.window_search as ws
name, res = sys.argv[1], sys.argv[2]
p, inc, r = case_and_incumbent(name, res)
device = inc.solution.device
cur = ws._Incumbent.of(p, inc)
rng = random.Random(0)
print("critical groups sizes", sorted({len(p.groups[p.group[k]]) for k in cur.critical}))
for size in (60, 30):
    for _ in range(6):
        w = ws._window(p, cur, "group", size, 400, rng)
        inside = [k for k in range(p.n_ops) if any(a <= inc.start_ms[k] < b for a, b in w)]
        free = {p.group[k] for k in inside if all(any(a <= inc.start_ms[x] < b for a, b in w) for x in p.groups[p.group[k]])}
        B = Budget(100, deterministic=True)
        ans = ws._solve_window(p, cur, w, B, 1.0)
        print(size, [(round(a, 2), round(b, 2)) for a, b in w], len(inside), "free groups", len(free), "->", None if ans is None else (round(ans[0].makespan_ms, 3), ans[1]), "inc", round(inc.makespan_ms, 3))
print("--- debug None windows")
from solvers import SolveStatus
orig = B.solve_cpsat
for w in ([(266.95, 271.41), (276.55, 279.7)], [(177.17, 183.05), (201.86, 206.75)]):
    # exact stretches from the starts
    def near(t): return min(inc.start_ms, key=lambda x: abs(x - t))
    w = [(near(a), near(b)) for a, b in w]
    B = Budget(100, deterministic=True)
    def spy(model, secs, **kw):
        run, solver = orig.__func__(B, model, 20.0, **kw)
        print("   status", run.status, "has", run.has_solution)
        return run, solver
    B.solve_cpsat = spy
    ans = ws._solve_window(p, cur, w, B, 1.0)
    print(w, None if ans is None else round(ans[0].makespan_ms, 3))
