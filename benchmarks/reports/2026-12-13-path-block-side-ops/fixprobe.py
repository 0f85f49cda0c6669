"""Solve the largest component of a decomposition once, free or with its boundary cut groups fixed on gpu0,
without a hint (deterministic budget): PYTHONPATH=. python fixprobe.py CASE SECONDS free|fixed
"""
import json, sys, time
from pathlib import Path
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
from placer.chain_loads import component_groups
import placer.decompose as D
name, secs, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
dec = D.decompose(p)
sizes = [sum(len(dec.segments[j]) for j in comp) for comp in dec.components]
c = max(range(len(sizes)), key=sizes.__getitem__)
groups, touching = component_groups(p, dec.cuts, dec.segments, dec.components[c])
reps = D.orbit_representatives(p)
print("component", c, "ops", sizes[c], "groups", len(groups), "cut groups", len(touching), "representatives", reps)
fixed = {gr: 0 for gr in touching} if mode == "fixed" else None
b = Budget(1e9, deterministic=True)
t = time.perf_counter()
a = D._solve_component(p, dec, dec.components[c], secs, b, None, fixed=fixed, representatives=reps)
cut_devices = sorted({a.device_of_group.get(gr) for gr in touching}, key=str)
print(name, mode, f"obj {a.objective_ms:.4f} bound {a.bound_ms:.4f} work {b.work:.2f} wall {time.perf_counter()-t:.1f} cut devices {cut_devices} devices used {sorted(set(a.device_of_group.values()))}")
