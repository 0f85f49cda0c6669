"""Probe: full graph, groups present in the bwd-only answer fixed there, others free: CP-SAT (schedule + free groups)."""
import json, sys, time
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.heuristics import resequence, justify
from placer.formulations.cpsat_model import build_cpsat
from placer.schedule import retime
from solvers.registry import get_backend, Limits
name, res, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
r = json.load(open(res)); pl = r['placement']
gdev = {}
for gi, ops in enumerate(p.groups):
    ds = {pl[p.ops[k]] for k in ops if p.ops[k] in pl}
    if ds: gdev[gi] = p.device_index[ds.pop()]
print('fixed groups', len(gdev), 'of', len(p.groups))
# a start: free groups on the device of a fixed neighbour, else 0
dev = [0] * p.n_ops
for gi, ops in enumerate(p.groups):
    d = gdev.get(gi)
    if d is None:
        for k in ops:
            for i in p.succs[k] + p.preds[k]:
                e = p.edges[i]; o = e.dst if e.src == k else e.src
                if p.group[o] in gdev: d = gdev[p.group[o]]; break
            if d is not None: break
    for k in ops: dev[k] = d or 0
s = justify(p, resequence(p, dev)); print('list schedule', s.makespan_ms, flush=True)
f = build_cpsat(p, s, 0.0, symmetry_breaking=False)
for gi, d in gdev.items(): f.model.add(f.presence[gi][d] == 1)
run, solver = get_backend('cpsat').solve(f.model, Limits(secs, threads=1))
s2 = retime(p, f.decode(solver.value, p)) if run.has_solution else s
print('refit', s2.makespan_ms, 'bound', f.lower_bound_ms(run.bound), run.status)
