"""For a result's placement: per device, JPS and exact one-machine-with-lags bounds."""
import json, sys, math, time
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.bounds import Costs, _preemptive_one_machine_ms
name, res = sys.argv[1], sys.argv[2]; secs = float(sys.argv[3]) if len(sys.argv) > 3 else 10
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); c = Costs.of(p)
r = json.load(open(res)); dev = {p.ops.index(o): p.devices.index(d) for o, d in r['placement'].items()}
def lags_from(a):
    dist = {a: 0.0}
    for k in range(a + 1, p.n_ops):
        best = -1
        for i in p.preds[k]:
            s = p.edges[i].src
            if s in dist:
                d = (0.0 if s == a else dist[s] + c.fastest[s])
                if c.apart[i]: d += c.delay[i]
                best = max(best, d)
        if best >= 0: dist[k] = best
    return dist
SCALE = 10000
for d in range(p.n_devices):
    ops = [k for k in range(p.n_ops) if dev[k] == d]
    t = {k: p.time_ms[k][d] for k in ops}
    jps = _preemptive_one_machine_ms([(c.head[k], t[k], c.tail[k]) for k in ops])
    m = cp_model.CpModel(); H = int((max(c.head[k] for k in ops) + sum(t.values()) + max(c.tail[k] for k in ops)) * SCALE) + 10
    S, iv = {}, []
    for k in ops:
        S[k] = m.new_int_var(int(c.head[k] * SCALE), H, f"s{k}")
        iv.append(m.new_fixed_size_interval_var(S[k], int(t[k] * SCALE), f"i{k}"))
    m.add_no_overlap(iv)
    for a in ops:
        dist = lags_from(a)
        for b in ops:
            if b != a and b in dist: m.add(S[b] >= S[a] + int(t[a] * SCALE) + int(dist[b] * SCALE))
    C = m.new_int_var(0, 2 * H, "C")
    for k in ops: m.add(C >= S[k] + int(t[k] * SCALE) + int(c.tail[k] * SCALE))
    m.minimize(C)
    sv = cp_model.CpSolver(); sv.parameters.max_time_in_seconds = secs; sv.parameters.num_workers = 2
    st = sv.solve(m)
    print(p.devices[d], len(ops), 'work %.2f jps %.3f exact bound %.3f obj %.3f %s' % (sum(t.values()), jps, sv.best_objective_bound / SCALE, sv.objective_value / SCALE, sv.status_name(st)), flush=True)
