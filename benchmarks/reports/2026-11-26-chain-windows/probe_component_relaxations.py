"""Each distinct component: its symmetric relaxation alone (2 workers), cold and hinted by the
component's answer. Usage: comp_relax.py NAME SECS"""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
from placer.relax import symmetric_relaxation
from placer.decompose import decompose, _solve_component, _shape, orbit_representatives
name, secs = sys.argv[1], float(sys.argv[2])
only = [int(x) for x in sys.argv[3].split(",")] if len(sys.argv) > 3 else None
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dec = decompose(p)
reps = orbit_representatives(p)
rp = symmetric_relaxation(p)
seen = {}
for c, comp in enumerate(dec.components):
    sh = _shape(p, dec, comp)
    if sh in seen: continue
    seen[sh] = c
    if only and c + 1 not in only: continue
    b = Budget(1000, threads=2); t = time.perf_counter()
    ans = _solve_component(p, dec, comp, 5, b, None, representatives=reps)
    w0 = time.perf_counter() - t
    out = []
    for hint in (None, ans):
        b = Budget(1000, threads=2); t = time.perf_counter()
        a = _solve_component(rp, dec, comp, secs, b, hint, representatives=[0])
        out.append(f"{'hinted' if hint else 'cold'} {time.perf_counter()-t:.2f}s opt {a.optimal} bound {a.bound_ms:.4f}")
    print(f"comp {c+1} 5s-answer {ans.objective_ms:.4f}/{ans.bound_ms:.4f} ({w0:.1f}s) | relaxed " + " | ".join(out), flush=True)
