"""Probe: the whole CP-SAT model hinted with a result's exact schedule, searching for answers; prints solutions."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.schedule import solution_from_starts, retime
from placer.formulations.cpsat_model import build_cpsat
from placer.bounds import lower_bound_ms
from solvers.registry import get_backend, Limits
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
workers = int(sys.argv[4]) if len(sys.argv) > 4 else 2
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
r = json.load(open(res))
dev = [p.device_index[r['placement'][op]] for op in p.ops]
st = {s['op']: s['start_ms'] for s in r['schedule']}
s = retime(p, solution_from_starts(p, dev, [st[op] for op in p.ops]))
lb = lower_bound_ms(p)
print('hint', s.makespan_ms, 'lb', lb, flush=True)
f = build_cpsat(p, s, lb)
t0 = time.time()
def on_sol(v): print(f'{time.time()-t0:6.1f} sol', flush=True)
def on_bound(b): pass
run, solver = get_backend('cpsat').solve(f.model, Limits(secs, threads=workers, on_solution=None))
print(run.status, 'obj ms', run.objective * f.tick_ms if run.objective else None, 'bound ms', f.lower_bound_ms(run.bound) if run.bound else None, flush=True)
if run.has_solution:
    s2 = retime(p, f.decode(solver.value, p)); print('retimed', s2.makespan_ms)
