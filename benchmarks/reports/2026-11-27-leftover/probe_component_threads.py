"""Component solves with one and two CP-SAT workers, wall clock: time, objective, bound per distinct
component. Usage: PYTHONPATH=. python probe_component_threads.py CASE SECONDS MAX_COMPONENTS"""
import json,sys,time
import placer.decompose as D
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec
from placer.budget import Budget
name=sys.argv[1]; secs=float(sys.argv[2]); maxc=int(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dec = D.decompose(p)
reps = D.orbit_representatives(p)
seen=set(); tot={1:[0,0,0],2:[0,0,0]}
for ci, comp in enumerate(dec.components):
    shape = D._shape(p, dec, comp)
    if shape in seen: continue
    seen.add(shape)
    if len(seen) > maxc: break
    row=[ci, sum(len(dec.segments[j]) for j in comp)]
    for th in (1,2):
        b = Budget(100, threads=th); t=time.time()
        a = D._solve_component(p, dec, comp, secs, b, None, representatives=reps)
        dt=time.time()-t
        row += [th, a.status[:4], round(a.objective_ms,4), round(a.bound_ms,4), round(dt,2)]
        tot[th][0]+=dt; tot[th][1]+=a.bound_ms; tot[th][2]+= a.status=="optimal"
    print(*row, flush=True)
print(name, "totals (time, sum bound, optimal)", tot)
