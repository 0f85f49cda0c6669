"""Per window step: work spent, status, when (in work) its last improving solution came."""
import json, sys, time
from pathlib import Path
import placer.window_search as ws
from placer.budget import Budget
from placer.engine import PlaceOptions, place, Strategy
from placer.schema import GraphSpec, HardwareSpec
name = sys.argv[1]
rec = []
flag = [False]
orig_solve_window = ws._solve_window
def solve_window(*a, **k):
    flag[0] = True
    try:
        return orig_solve_window(*a, **k)
    finally:
        flag[0] = False
ws._solve_window = solve_window
orig = Budget.solve_cpsat
def solve_cpsat(self, model, seconds, **options):
    if not flag[0]:
        return orig(self, model, seconds, **options)
    sols = []
    def on_sol(cb):
        sols.append((cb.wall_time, cb.objective_value))
    run, solver = orig(self, model, seconds, on_solution=on_sol, **options)
    rec.append(dict(nvars=len(model.proto.variables), limit=seconds, work=run.work, wall=run.wall_s, status=run.status.value, sols=sols))
    return run, solver
Budget.solve_cpsat = solve_cpsat
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
print(name, r.makespan_ms, r.lower_bound_ms, f"{100*r.gap:.2f}%")
Path(f"/tmp/g/winprobe_{name}.json").write_text(json.dumps(rec))
tot = sum(x["work"] for x in rec); print("window steps", len(rec), "work", round(tot, 2))
opt = [x for x in rec if x["status"] == "optimal"]; lim = [x for x in rec if x["status"] != "optimal"]
print("optimal", len(opt), "work", round(sum(x["work"] for x in opt), 2), "| not", len(lim), "work", round(sum(x["work"] for x in lim), 2))
after = sum(x["work"] * (1 - (x["sols"][-1][0] / x["wall"] if x["sols"] else 0)) for x in lim)
print("work after the last improving solution, in non-closed steps:", round(after, 2))
improved = [x for x in lim if len(x["sols"]) > 1]
print("non-closed steps with an improving solution beyond the first:", len(improved))
for x in rec[:80]:
    print(x["status"][:4], round(x["work"], 3), round(x["wall"], 3), x["nvars"], [(round(t, 3), round(o)) for t, o in x["sols"]][-4:])
