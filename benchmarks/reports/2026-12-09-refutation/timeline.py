"""timeline.py NAME SECS: det run printing phase changes with budget spent (work-seconds)."""
import json, sys
import placer.budget as B
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
budgets = []
orig = B.Budget.__init__
def init(self, *a, **k):
    orig(self, *a, **k); budgets.append(self)
B.Budget.__init__ = init
name, secs = sys.argv[1], float(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
last = [None]
def cb(p):
    if p.heartbeat: return
    b = budgets[0]
    print(f"wall {p.elapsed_s:6.1f} spent {b.spent():6.1f} {p.phase:15s} inc {p.incumbent_ms} lb {p.bound_ms} {p.message[:90]}", flush=True)
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True), progress=cb)
print("END", r.makespan_ms, r.lower_bound_ms, r.gap, budgets[0].spent())
