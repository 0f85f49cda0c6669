"""Prototype: min over group->device assignments of max over devices of the one-machine
(head + work + tail) bound over all threshold pairs."""
import json, sys, math, time
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.bounds import Costs, _preemptive_one_machine_ms
name = sys.argv[1]; secs = float(sys.argv[2]) if len(sys.argv) > 2 else 10; Q = int(sys.argv[3]) if len(sys.argv) > 3 else 40
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
c = Costs.of(p)
SCALE = 1000
def quant(vals, q):
    vals = sorted(set(vals))
    if len(vals) <= q: return vals
    return [vals[int(i * (len(vals) - 1) / (q - 1))] for i in range(q)]
A = quant(c.head, Q); Bq = quant(c.tail, Q)
m = cp_model.CpModel()
G = len(p.groups); D = p.n_devices
x = {(gi, d): m.new_bool_var(f"x{gi}_{d}") for gi in range(G) for d in range(D)}
for gi in range(G):
    m.add_exactly_one(x[gi, d] for d in range(D) if d in p.allowed[gi])
    for d in range(D):
        if d not in p.allowed[gi]: m.add(x[gi, d] == 0)
C = m.new_int_var(0, 10**9, "C")
nc = 0
for a in A:
    for b in Bq:
        for d in range(D):
            terms = []
            for gi, ops in enumerate(p.groups):
                w = sum(p.time_ms[k][d] for k in ops if c.head[k] >= a and c.tail[k] >= b)
                if w > 0: terms.append((int(w * SCALE), x[gi, d]))
            if terms:
                m.add(C >= int(a * SCALE) + int(b * SCALE) + sum(w * v for w, v in terms)); nc += 1
# symmetry: first group on device 0 etc. (interchangeable devices assumed)
m.minimize(C)
sv = cp_model.CpSolver(); sv.parameters.max_time_in_seconds = secs; sv.parameters.num_workers = 2
t0 = time.time(); st = sv.solve(m)
print(name, 'constraints', nc, 'bound %.3f obj %.3f %s %.1fs' % (sv.best_objective_bound / SCALE, sv.objective_value / SCALE, sv.status_name(st), time.time() - t0))
# true JPS of the assignment
for d in range(D):
    ops = [k for gi in range(G) if sv.value(x[gi, d]) for k in p.groups[gi]]
    print(d, len(ops), 'work %.2f jps %.3f' % (sum(p.time_ms[k][d] for k in ops), _preemptive_one_machine_ms([(c.head[k], p.time_ms[k][d], c.tail[k]) for k in ops])), sorted({p.ops[p.groups[gi][0]] for gi in range(G) if sv.value(x[gi, d])})[:8])
