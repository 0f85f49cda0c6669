"""Probe: the largest distinct component of a decomposed case: real vs relaxed, default vs lb search."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.decompose import decompose, _solve_component, orbit_representatives, _shape
from placer.relax import symmetric_relaxation
from placer.budget import Budget
name, secs = sys.argv[1], float(sys.argv[2]); which = sys.argv[3]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dec = decompose(p)
sizes = [sum(len(dec.segments[j]) for j in comp) for comp in dec.components]
c = max(range(len(sizes)), key=sizes.__getitem__)
print('components', len(dec.components), 'sizes', sizes, 'largest', c, flush=True)
reps = orbit_representatives(p); print('reps', reps)
rel = symmetric_relaxation(p)
b = Budget(1e9, deterministic=True, threads=1)
t = time.time()
if which == 'real':
    a = _solve_component(p, dec, dec.components[c], secs, b, None, representatives=reps)
elif which == 'relaxed':
    a = _solve_component(rel, dec, dec.components[c], secs, b, None, representatives=[0])
else:
    a = _solve_component(rel, dec, dec.components[c], secs, b, None, representatives=[0], bound_search=True)
print(which, 'obj', a.objective_ms, 'bound', a.bound_ms, a.status, 'wall', round(time.time()-t,1), flush=True)
