"""The coupled bound's parts (spread, switched) and master for one case: MODE (wall|det), SECONDS (the
parts get half), THREADS. Usage: PYTHONPATH=. python probe_chain_parts.py CASE MODE SECONDS [THREADS]"""
import json,sys,time
import placer.decompose as D
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec
from placer.budget import Budget
from placer.chain_loads import chain_loads
name=sys.argv[1]; det = sys.argv[2]=="det"; secs=float(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
dec = D.decompose(p)
reps = D.orbit_representatives(p)
b = Budget(100, deterministic=det, threads=int(sys.argv[4]) if len(sys.argv)>4 else 2)
answers = [D._solve_component(p, dec, c, 5, b, None, representatives=reps) for c in dec.components]
print("free", [round(a.bound_ms,4) for a in answers], [a.status for a in answers])
t=time.time()
parts = D.coupled_parts(p, dec, answers, list(range(len(answers))), b, secs/2, reps)
print("spread", [round(x,4) for x in parts.spread_bound_ms], "switched", [round(x,4) for x in parts.switched_bound_ms], "t", round(time.time()-t,2))
t=time.time()
print("master", chain_loads(p, parts, b, secs/2), round(time.time()-t,2))
