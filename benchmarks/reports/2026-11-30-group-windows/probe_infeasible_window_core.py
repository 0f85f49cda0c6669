import json, sys, random, types
exec(open('benchmarks/reports/2026-11-30-group-windows/probe_window_steps.py').read().split("rng = random")[0])
from ortools.sat.python import cp_model
src = open('/work/main/placer/window_search.py').read()
src = src.replace("m.add(e[k] + up(delay(i, d, device[v])) <= up(start[v] - lo) + 3).only_enforce_if(lit)",
  "_a = m.new_bool_var(f'DL_{k}_{v}_{d}'); GUARDS.append(_a); m.add(e[k] + up(delay(i, d, device[v])) <= up(start[v] - lo) + 3).only_enforce_if([lit, _a])")
src = src.replace("""per_device[device[k]].append(m.new_fixed_size_interval_var(
                up(start[k] - lo) + 2, up(end[k] - start[k]) - 4, f"frozen_{k}"))""",
 """_a = m.new_bool_var(f'FZ_{k}'); GUARDS.append(_a); per_device[device[k]].append(m.new_optional_fixed_size_interval_var(
                up(start[k] - lo) + 2, up(end[k] - start[k]) - 4, _a, f"frozen_{k}"))""")
w = [(266.95, 271.41), (276.55, 279.7)]
def near(t): return min(inc.start_ms, key=lambda x: abs(x - t))
w = [(near(a), near(b)) for a, b in w]
mod = types.ModuleType("wsx"); sys.modules["wsx"] = mod
mod.GUARDS = []
exec(compile(src, "wsx", "exec"), mod.__dict__)
B = Budget(100, deterministic=True); cap = {}; orig = B.solve_cpsat
def spy(model, secs, **kw):
    cap['m'] = model; return orig(model, secs, **kw)
B.solve_cpsat = spy
mod._solve_window(p, mod._Incumbent.of(p, inc), w, B, 1.0)
m = cap['m']
m.add_assumptions(mod.GUARDS)
sv = cp_model.CpSolver(); sv.parameters.max_time_in_seconds = 20; sv.parameters.num_workers = 1
st = sv.Solve(m); print(sv.StatusName(st))
core = sv.SufficientAssumptionsForInfeasibility()
print([m.Proto().variables[i].name for i in core])
lo = w[0][0]
for nm in [m.Proto().variables[i].name for i in core]:
    parts = nm.split('_')
    if parts[0] == 'FZ':
        k = int(parts[1]); print(nm, p.ops[k], p.devices[inc.solution.device[k]], round(inc.start_ms[k], 4), round(inc.end_ms[k], 4))
    else:
        k, v = int(parts[1]), int(parts[2]); print(nm, p.ops[k], p.devices[inc.solution.device[k]], round(inc.start_ms[k], 4), round(inc.end_ms[k], 4), "->", p.ops[v], p.devices[inc.solution.device[v]], round(inc.start_ms[v], 4))
import math
lo, hi = w[0][0], w[-1][1]
tick = max(inc.makespan_ms - lo, 1e-9) / 100_000
up = lambda ms: max(0, math.ceil(ms / tick - 1e-9))
inside = [k for k in range(p.n_ops) if any(a <= inc.start_ms[k] < b for a, b in w)]
ins = set(inside)
frozen = [k for k in range(p.n_ops) if lo <= inc.start_ms[k] < hi and k not in ins]
dev = inc.solution.device
for k in inside:
    s = up(inc.start_ms[k] - lo); e = s + up(p.time_ms[k][dev[k]])
    for f in frozen:
        if dev[f] != dev[k] or up(inc.end_ms[f] - inc.start_ms[f]) <= 4: continue
        fs = up(inc.start_ms[f] - lo) + 2; fe = fs + up(inc.end_ms[f] - inc.start_ms[f]) - 4
        if s < fe and fs < e and e > s:
            print("overlap", p.ops[k], s, e, p.ops[f], fs, fe)
print("window", w, "inside", len(inside), "frozen", len(frozen))
for k in sorted(inside, key=lambda k: inc.start_ms[k]): print(" ", p.ops[k], p.devices[dev[k]], round(inc.start_ms[k], 3), round(inc.end_ms[k], 3), "group", [p.ops[x] for x in p.groups[p.group[k]]])
print("---- hint check")
S = {k: up(inc.start_ms[k] - lo) for k in inside}
E = {k: S[k] + up(p.time_ms[k][dev[k]]) for k in inside}
for k in inside:
    for i in p.preds[k]:
        u = p.edges[i].src
        dl = p.delay_ms(p.edges[i], dev[u], dev[k]) if dev[u] != dev[k] else 0.0
        if u in ins:
            if S[k] < E[u] + up(dl): print("prec viol", p.ops[u], p.ops[k], S[k], E[u], up(dl))
        else:
            if S[k] < up(inc.end_ms[u] - lo + dl): print("ready viol", p.ops[u], p.ops[k], S[k], up(inc.end_ms[u] - lo + dl))
busy = [k for k in range(p.n_ops) if inc.start_ms[k] < lo < inc.end_ms[k]]
for k in inside:
    for b in busy:
        if dev[b] == dev[k] and S[k] < up(inc.end_ms[b] - lo): print("busy viol", p.ops[k], p.ops[b])
    for x in inside:
        if x != k and dev[x] == dev[k] and S[k] < E[x] and S[x] < E[k] and E[k] > S[k] : print("inside overlap", p.ops[k], p.ops[x], S[k], E[k], S[x], E[x])
