"""Probe: whole CP-SAT model with or without a redundant no-overlap per colocation group; det 1 worker.
grp_probe.py NAME RESULT UNITS grp|plain lbs|default [exact]: hinted with the result's placement list-scheduled
anew, or with `exact` its own schedule."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.heuristics import resequence, justify
from placer.formulations.cpsat_model import build_cpsat
from placer.bounds import lower_bound_ms, Costs
from solvers.registry import get_backend, Limits
name, res, secs, grp, lbs = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4] == 'grp', sys.argv[5] == 'lbs'
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
r = json.load(open(res))
dev = [p.device_index[r['placement'][op]] for op in p.ops]
if len(sys.argv) > 6 and sys.argv[6] == 'exact':
    from placer.schedule import solution_from_starts, retime
    st = {x["op"]: x["start_ms"] for x in r["schedule"]}
    s = retime(p, solution_from_starts(p, dev, [st[op] for op in p.ops]))
else:
    s = justify(p, resequence(p, dev))
print("hint", s.makespan_ms)
c = Costs.of(p)
f = build_cpsat(p, s, lower_bound_ms(p), releases=(c.head, c.tail))
m = f.model
if grp:
    n = 0
    for gi, ops in enumerate(p.groups):
        iv = [m.new_fixed_size_interval_var(f.start[k], min(f.duration_ticks[k][d] for d in p.allowed[gi]), f"g{gi}_{k}")
              for k in ops if min(f.duration_ticks[k][d] for d in p.allowed[gi]) > 0]
        if len(iv) > 1:
            m.add_no_overlap(iv); n += 1
    print('group no-overlaps', n)
run, solver = get_backend('cpsat').solve(m, Limits(secs, threads=1, deterministic=True, bound_search=lbs))
print(name, 'grp' if grp else 'plain', 'lbs' if lbs else 'default', 'obj', run.objective * f.tick_ms if run.objective else None, 'bound', f.lower_bound_ms(run.bound), run.status, flush=True)
