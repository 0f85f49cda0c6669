"""refprobe.py NAME SECS STEP SIZES: refute alone from the heads' bound, printing each test."""
import json, sys, time
import placer.refutation as R
from placer.bounds import Costs, lower_bound_ms
from placer.budget import Budget
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec
name, secs, step = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
sizes = tuple(int(x) for x in sys.argv[4].split(","))
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
orig = R._infeasible
b = Budget(1000, deterministic=True)
def inf(problem, costs, lags, budget, seconds, target, groups):
    t = budget.spent(); r = orig(problem, costs, lags, budget, seconds, target, groups)
    print(f"  T {target:.4f} ops {sum(len(problem.groups[x]) for x in groups)} lim {seconds:.1f} spent {budget.spent()-t:.1f} -> {'REFUTED' if r else '-'}", flush=True)
    return r
R._infeasible = inf
lb = lower_bound_ms(p)
r = R.refute(p, Costs.of(p), b, secs, lb, float(sys.argv[5]), R.RefuteOptions(group_ops=sizes, step_s=step))
print(name, lb, "->", r.bound_ms, r.tests, r.refuted, r.stopped_by, f"spent {b.spent():.1f}")
