"""Record every CP-SAT call of a deterministic run: wall, work, model size, caller."""
import json, sys, time, traceback, collections
import placer.budget as B
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
calls = []
orig = B.Budget.solve_cpsat
def wrapped(self, model, seconds, **kw):
    t = time.perf_counter()
    run, solver = orig(self, model, seconds, **kw)
    caller = [f.name for f in traceback.extract_stack()[-4:-1]]
    calls.append((time.perf_counter() - t, run.work, len(model.proto.variables), len(model.proto.constraints), "/".join(caller)))
    return run, solver
B.Budget.solve_cpsat = wrapped
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=float(sys.argv[2]), deterministic=True))
total = time.perf_counter() - t
print(name, f"{r.makespan_ms:.4f} gap {100*r.gap:.2f}% wall {total:.0f}")
agg = collections.defaultdict(lambda: [0, 0.0, 0.0, 0])
for wall, work, nv, nc, caller in calls:
    a = agg[caller.split("/")[-1]]
    a[0] += 1; a[1] += wall; a[2] += work; a[3] += nv + nc
for k, (n, wall, work, size) in sorted(agg.items(), key=lambda x: -x[1][1]):
    print(f"{k:30s} calls {n:5d} wall {wall:7.1f} work {work:7.2f} wall/work {wall/max(work,1e-9):6.1f} mean size {size/n:8.0f}")
print("cp-sat wall", sum(c[0] for c in calls), "outside", total - sum(c[0] for c in calls))
json.dump(calls, open(f"/tmp/q/s24/calls_{name}.json", "w"))
