"""Probe: a minimal CP-SAT model of the scheduling half (placement fixed): minfix.py NAME RESULT SECS WORKERS [nohint]"""
import json, sys, time, math
from ortools.sat.python import cp_model
from probe_common import case_and_incumbent
from placer.schedule import Solution, retime
name, res, secs, workers = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
p, inc, r = case_and_incumbent(name, res)
device = inc.solution.device
tick = inc.makespan_ms / 200000
T = lambda x: math.ceil(x / tick - 1e-9)
H = T(inc.makespan_ms) + 10
m = cp_model.CpModel()
dur = [T(p.time_ms[k][device[k]]) for k in range(p.n_ops)]
s = [m.NewIntVar(0, H, f"s{k}") for k in range(p.n_ops)]
iv = [m.NewFixedSizeIntervalVar(s[k], dur[k], f"i{k}") for k in range(p.n_ops)]
for d in range(p.n_devices):
    m.AddNoOverlap([iv[k] for k in range(p.n_ops) if device[k] == d and dur[k] > 0])
for e in p.edges:
    dl = T(p.delay_ms(e, device[e.src], device[e.dst])) if device[e.src] != device[e.dst] else 0
    m.Add(s[e.dst] >= s[e.src] + dur[e.src] + dl)
cmax = m.NewIntVar(0, H, "cmax")
for k in range(p.n_ops):
    m.Add(cmax >= s[k] + dur[k])
m.Minimize(cmax)
if len(sys.argv) <= 5:
    for k in range(p.n_ops):
        m.AddHint(s[k], T(inc.start_ms[k]))
sv = cp_model.CpSolver(); sv.parameters.max_time_in_seconds = secs; sv.parameters.num_workers = workers
class CB(cp_model.CpSolverSolutionCallback):
    def __init__(s2): super().__init__(); s2.t = time.time()
    def on_solution_callback(s2): print(f"  {time.time()-s2.t:6.1f}s sol {s2.ObjectiveValue()*tick:.4f} bound {s2.BestObjectiveBound()*tick:.4f}", flush=True)
t = time.time(); st = sv.Solve(m, CB())
print(name, "incumbent", round(inc.makespan_ms, 4), sv.StatusName(st), "obj", round(sv.ObjectiveValue()*tick, 4), "bound", round(sv.BestObjectiveBound()*tick, 4), f"{time.time()-t:.1f}s")
