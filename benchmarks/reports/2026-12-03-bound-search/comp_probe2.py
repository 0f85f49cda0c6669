"""Component: first an answer without ordering, then again from it with/without branch ordering."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
from placer.op_symmetry import sorted_by_start
import placer.decompose as D
name, secs, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
if len(sys.argv) > 4:
    from placer.relax import symmetric_relaxation
    p = symmetric_relaxation(p)
dec = D.decompose(p)
sizes = [sum(len(dec.segments[j]) for j in comp) for comp in dec.components]
c = max(range(len(sizes)), key=sizes.__getitem__)
reps = D.orbit_representatives(p)
orig = D.ordered_pairs
D.ordered_pairs = lambda classes, ops: []
b = Budget(1e9, deterministic=True)
a = D._solve_component(p, dec, dec.components[c], 8, b, None, representatives=reps)
print("first", f"obj {a.objective_ms:.4f} bound {a.bound_ms:.4f}")
if mode == "on":
    D.ordered_pairs = orig
    start = {k: v for (j, k), v in a.local_start_ms.items()}
    rel = sorted_by_start(p.interchangeable_branches, start)
    seg = {k: j for (j, k) in a.local_start_ms}
    ls = {(j, k): a.local_start_ms[seg[rel.get(k, k)], rel.get(k, k)] for (j, k) in a.local_start_ms}
    dg = {p.group[k]: a.device_of_group[p.group[rel.get(k, k)]] for (j, k) in a.local_start_ms}
    for gg in a.device_of_group: dg.setdefault(gg, a.device_of_group[gg])
    a = D._ComponentAnswer(dg, ls, a.bound_ms, a.objective_ms, a.optimal, a.status)
t = time.perf_counter(); w = b.work
a2 = D._solve_component(p, dec, dec.components[c], secs, b, a, representatives=reps)
print(name, mode, f"ops {sizes[c]} obj {a2.objective_ms:.4f} bound {a2.bound_ms:.4f} gap {a2.objective_ms-a2.bound_ms:.4f} optimal {a2.optimal} work {b.work-w:.2f} wall {time.perf_counter()-t:.1f}")
