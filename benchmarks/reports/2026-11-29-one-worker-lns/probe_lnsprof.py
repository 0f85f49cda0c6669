"""Probe: where a neighbourhood search step's time goes (placer.neighbourhood.improve on a det answer)."""
import json, sys, time, cProfile, pstats
from placer.schema import parse_graph, parse_hardware, load_json
from placer.model import build_problem
from placer.budget import Budget
from placer.schedule import Solution, retime
from placer.formulations.cpsat_model import build_cpsat
from placer.bounds import lower_bound_ms
from placer.neighbourhood import improve
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
c = f"/tmp/q/cases/{name}"
p = build_problem(parse_graph(load_json(c + ".graph.json")), parse_hardware(load_json(c + ".hw.json")))
r = json.load(open(res))
idx = {o: k for k, o in enumerate(p.ops)}; didx = {d: i for i, d in enumerate(p.devices)}
device = [0] * p.n_ops; start = [0.0] * p.n_ops
for s in r["schedule"]:
    device[idx[s["op"]]] = didx[s["device"]]; start[idx[s["op"]]] = s["start_ms"]
order = [sorted((k for k in range(p.n_ops) if device[k] == d), key=lambda k: (start[k], k)) for d in range(p.n_devices)]
inc = retime(p, Solution(device=device, order=order))
t = time.time()
f = build_cpsat(p, inc, lower_bound_ms(p), redundant_cumulative=False, symmetry_breaking=False)
print("built", round(time.time() - t, 2), flush=True)
B = Budget(secs, deterministic=True, threads=1)
best = [inc.makespan_ms]
def offer(sol, src):
    s = retime(p, sol)
    if s.makespan_ms < best[0]: best[0] = s.makespan_ms; print(round(time.time()-t,1), src, round(s.makespan_ms, 4), flush=True)
    return s
pr = cProfile.Profile(); pr.enable()
counts = improve(p, f, inc, B, secs, 0, offer, lambda s: False)
pr.disable()
print(counts, "wall", round(time.time() - t, 1))
pstats.Stats(pr).sort_stats("cumulative").print_stats(18)
