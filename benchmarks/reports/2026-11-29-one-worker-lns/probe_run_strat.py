"""run_strat.py NAME SECS key=value...: deterministic run with Strategy overrides, run_case.py's line format."""
import json, sys, time
from placer.engine import PlaceOptions, place, Strategy
from placer.schema import GraphSpec, HardwareSpec
name, secs = sys.argv[1], float(sys.argv[2])
kw = {k: type(getattr(Strategy(), k))(v) for k, v in (a.split("=") for a in sys.argv[3:])}
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True), strategy=Strategy(**kw))
print(name, secs, f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% from {r.stats.best_from} tight {r.stats.tight_bound} lns {r.stats.neighbourhood_steps} wall {time.perf_counter()-t:.0f}", flush=True)
tag = "_".join(sys.argv[3:]).replace("=", "")
json.dump(r.model_dump(mode="json"), open(f"/tmp/q/res_{name}_{tag}.json", "w"))
