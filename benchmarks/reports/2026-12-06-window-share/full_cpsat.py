"""Probe: the whole CP-SAT model of a case, hinted with a result's placement, SECS seconds; prints the bound."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.heuristics import resequence, justify
from placer.formulations.cpsat_model import build_cpsat
from placer.bounds import lower_bound_ms
from solvers.registry import get_backend, Limits
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
det = len(sys.argv) > 4 and sys.argv[4] == "det"
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
r = json.load(open(res))
dev = [p.device_index[r['placement'][op]] for op in p.ops]
s = justify(p, resequence(p, dev))
lb = lower_bound_ms(p)
print('hint', s.makespan_ms, 'lb', lb, flush=True)
f = build_cpsat(p, s, lb)
t0 = time.time()
def on_bound(b): print(f'{time.time()-t0:6.1f} bound {f.lower_bound_ms(b):.4f}', flush=True)
def on_sol(v): print(f'{time.time()-t0:6.1f} sol', flush=True)
run, solver = get_backend('cpsat').solve(f.model, Limits(secs, threads=1 if det else 2, deterministic=det, on_bound=on_bound, bound_search=True))
print(run.status, run.objective, run.bound, f.lower_bound_ms(run.bound) if run.bound else None, f.tick_ms)
