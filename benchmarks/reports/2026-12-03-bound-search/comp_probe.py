"""Solve the largest distinct component of a decomposition with/without branch ordering."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
import placer.decompose as D
name, secs, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dec = D.decompose(p)
sizes = [sum(len(dec.segments[j]) for j in comp) for comp in dec.components]
c = max(range(len(sizes)), key=sizes.__getitem__)
if mode == "off":
    D.ordered_pairs = lambda classes, ops: []
reps = D.orbit_representatives(p)
b = Budget(1e9, deterministic=True)
t = time.perf_counter()
a = D._solve_component(p, dec, dec.components[c], secs, b, None, representatives=reps)
print(name, mode, f"ops {sizes[c]} obj {a.objective_ms:.4f} bound {a.bound_ms:.4f} gap {a.objective_ms-a.bound_ms:.4f} optimal {a.optimal} work {b.work:.2f} wall {time.perf_counter()-t:.1f}")
