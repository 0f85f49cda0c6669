"""Det 60 s run with every CP-SAT call's (caller, work, wall) recorded: work per wall second by kind."""
import json, sys, time, inspect, collections
from pathlib import Path
import placer.budget as B
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
calls = collections.defaultdict(lambda: [0.0, 0.0, 0])
orig = B.Budget.solve_cpsat
def wrapped(self, model, seconds, **o):
    caller = inspect.stack()[1]
    key = f"{Path(caller.filename).stem}.{caller.function}"
    t = time.perf_counter()
    run, solver = orig(self, model, seconds, **o)
    c = calls[key]; c[0] += run.work; c[1] += time.perf_counter() - t; c[2] += 1
    return run, solver
B.Budget.solve_cpsat = wrapped
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
wall = time.perf_counter() - t
tw = sum(c[1] for c in calls.values())
print(f"{name}: wall {wall:.1f}s cpsat wall {tw:.1f}s gap {100*r.gap:.2f}%")
for k, (w, s, n) in sorted(calls.items(), key=lambda kv: -kv[1][0]):
    print(f"   {k:40s} n {n:4d} work {w:6.2f} wall {s:6.1f}s rate {w/max(s,1e-9):.2f}/s")
