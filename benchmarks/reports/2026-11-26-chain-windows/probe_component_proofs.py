"""Each distinct component of a case's decomposition solved alone to optimality (2 workers):
wall time to optimal, work units. Usage: comp_proof.py NAME SECS"""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
from placer.decompose import decompose, _solve_component, _shape, orbit_representatives
name, secs = sys.argv[1], float(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dec = decompose(p)
reps = orbit_representatives(p)
seen = {}
tot = 0
for c, comp in enumerate(dec.components):
    sh = _shape(p, dec, comp)
    if sh in seen: continue
    seen[sh] = c
    b = Budget(1000, threads=int(sys.argv[3]) if len(sys.argv) > 3 else 2)
    t = time.perf_counter()
    a = _solve_component(p, dec, comp, secs, b, None, representatives=reps)
    w = time.perf_counter() - t
    tot += w
    n = sum(len(dec.segments[j]) for j in comp)
    print(f"comp {c+1} ops {n} wall {w:.2f}s work {b.work:.2f} opt {a.optimal} obj {a.objective_ms:.4f} bound {a.bound_ms:.4f}", flush=True)
print("total", round(tot, 1))
