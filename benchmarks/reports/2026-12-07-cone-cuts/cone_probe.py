"""cone_probe.py NAME SECS [key=value ...]: the cone bounds alone on a case (deterministic, one worker),
with ConeOptions overrides; prints each pass's bound."""
import json, sys, time
from dataclasses import replace
from placer.budget import Budget
from placer.cone_bounds import ConeOptions, raise_by_cones
from placer.bounds import lower_bound_ms
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec

name, secs = sys.argv[1], float(sys.argv[2])
over = {k: (float(v) if "." in v else int(v)) for k, v in (a.split("=") for a in sys.argv[3:])}
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
budget = Budget(secs, deterministic=True, threads=1)
t = time.perf_counter()
known = lower_bound_ms(p)
c = raise_by_cones(p, budget, secs, known, replace(ConeOptions(), **over),
                   on_step=lambda m, b: print(f"  {m}: {b:.4f} ({time.perf_counter() - t:.0f} s)", flush=True))
print(name, secs, over, f"known {known:.4f} cones {c.bound_ms:.4f} solves {c.solves} raised {c.raised} "
      f"stopped {c.stopped_by} wall {time.perf_counter() - t:.0f}", {k: round(v, 4) for k, v in c.named.items()}, flush=True)
