"""How low the fixed-placement relaxation (probe_fixed_placement_bound.fixed_bound) goes over group
placements: local search from six starts; then four of its minima resequenced and solved by CP-SAT
with the placement fixed. probe_min_fixed_placement_bound.py CASE RESULT (as the other probe)."""
import sys, random, time
from probe_common import case_and_incumbent
from probe_fixed_placement_bound import fixed_bound, fixed_optimum
from placer.heuristics import resequence

name, res = sys.argv[1], sys.argv[2]
p, s, r = case_and_incumbent(name, res)
G = len(p.groups)


def devices_of(assign):
    """Each op's device from each group's."""
    dev = [0] * p.n_ops
    for g, ops in enumerate(p.groups):
        for k in ops:
            dev[k] = assign[g]
    return dev


def val(assign):
    path, per = fixed_bound(p, devices_of(assign))
    return max(path, max(per))


def local_min(a, rng):
    """Single-group moves in a seeded random order until none lowers val; `a` ends there."""
    cur = val(a)
    improved = True
    while improved:
        improved = False
        for g in rng.sample(range(G), G):
            for d in range(p.n_devices):
                if d == a[g]: continue
                old = a[g]; a[g] = d
                v = val(a)
                if v < cur - 1e-9:
                    cur = v; improved = True
                else:
                    a[g] = old
    return cur


inc = [s.solution.device[ops[0]] for ops in p.groups]
print("incumbent placement bound", val(inc))
rng = random.Random(0)
best_all = 1e9
t0 = time.time()
for start in range(6):
    a = inc[:] if start == 0 else [rng.randrange(p.n_devices) for _ in range(G)]
    cur = local_min(a, rng)
    best_all = min(best_all, cur)
    print("start", start, "local min", round(cur, 3), f"{time.time()-t0:.0f}s", flush=True)
print("best", best_all)

# schedule the relaxation's best placements
rng = random.Random(1)
for start in range(4):
    a = [rng.randrange(p.n_devices) for _ in range(G)]
    cur = local_min(a, rng)
    dev = devices_of(a)
    sched = resequence(p, dev)
    loads = [round(sum(p.time_ms[k][d] for k in range(p.n_ops) if dev[k] == d), 2) for d in range(p.n_devices)]
    print("relaxation", round(cur, 3), "resequenced", round(sched.makespan_ms, 3), loads,
          "fixed cp-sat", fixed_optimum(p, sched, 10), flush=True)
