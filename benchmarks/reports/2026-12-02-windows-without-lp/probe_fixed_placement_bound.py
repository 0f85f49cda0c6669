"""Fixed-placement bound (communication-aware longest path, Jackson per device) and CP-SAT with the
placement fixed, for an engine result: probe_fixed_placement_bound.py CASE RESULT [SECS]. Run from the
repository root, PYTHONPATH=.:benchmarks/reports/2026-11-30-group-windows:this folder."""
import sys, math, time, collections
from probe_common import case_and_incumbent
from placer.bounds import _preemptive_one_machine_ms
from placer.formulations.cpsat_model import build_cpsat
from ortools.sat.python import cp_model


def fixed_bound(p, dev):
    t = [p.time_ms[k][dev[k]] for k in range(p.n_ops)]
    head = [0.0] * p.n_ops
    for v in range(p.n_ops):  # ops are topologically ordered
        for i in p.preds[v]:
            e = p.edges[i]
            head[v] = max(head[v], head[e.src] + t[e.src] + p.delay_ms(e, dev[e.src], dev[v]))
    tail = [0.0] * p.n_ops
    for u in range(p.n_ops - 1, -1, -1):
        for i in p.succs[u]:
            e = p.edges[i]
            tail[u] = max(tail[u], tail[e.dst] + t[e.dst] + p.delay_ms(e, dev[u], dev[e.dst]))
    path = max(head[k] + t[k] + tail[k] for k in range(p.n_ops))
    per_dev = [_preemptive_one_machine_ms([(head[k], t[k], tail[k]) for k in range(p.n_ops) if dev[k] == d])
               for d in range(p.n_devices)]
    return path, per_dev


def fixed_optimum(p, s, secs):
    f = build_cpsat(p, s, 0.0, symmetry_breaking=False)
    for g, lits in enumerate(f.presence):
        d0 = s.solution.device[p.groups[g][0]]
        for d, lit in lits.items():
            f.model.add(lit == (d == d0))
    solver = cp_model.CpSolver()
    solver.parameters.max_time_in_seconds = secs
    solver.parameters.num_workers = 2
    st = solver.solve(f.model)
    return solver.status_name(st), solver.objective_value * f.tick_ms, f.lower_bound_ms(solver.best_objective_bound)


if __name__ == "__main__":
    name, res = sys.argv[1], sys.argv[2]
    secs = float(sys.argv[3]) if len(sys.argv) > 3 else 20
    p, s, r = case_and_incumbent(name, res)
    path, per_dev = fixed_bound(p, s.solution.device)
    print("incumbent", s.makespan_ms, "path", path, "jackson", [round(x, 3) for x in per_dev])
    t0 = time.time()
    print("cp-sat fixed placement", fixed_optimum(p, s, secs), f"{time.time()-t0:.1f}s")
