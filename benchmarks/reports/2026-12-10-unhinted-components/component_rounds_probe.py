"""component_rounds_probe.py NAME FIRST SECS STEP MODE [C]: component C (0) solved for FIRST work units without a
hint, then for SECS more either in the engine's rounds from its answer (MODE again, each twice the last) or in
neighbourhoods (MODE lns: a random share of its groups free, the rest fixed, STEP units each, the share adapted)."""
import sys, random
from cases import decomposed
from placer.decompose import _solve_component, _better
name, first, secs, step = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
mode = sys.argv[5]
c = int(sys.argv[6]) if len(sys.argv) > 6 else 0
p, d, reps, b = decomposed(name)
comp = d.components[c]
a = _solve_component(p, d, comp, first, b, None, representatives=reps)
print("first", a.objective_ms, a.bound_ms, "spent", round(b.spent(), 1), flush=True)
end = b.spent() + secs
if mode == "again":
    share = first
    while b.spent() < end - 0.2:
        share = min(end - b.spent(), 2 * share)
        again = _solve_component(p, d, comp, share, b, a, representatives=reps)
        a = _better(a, again)
        print("again", round(share, 1), a.objective_ms, a.bound_ms, flush=True)
else:
    rng = random.Random(0)
    groups = sorted(a.device_of_group)
    size = max(2, len(groups) // 4)
    steps = improved = 0
    while b.spent() < end - 0.05:
        free = set(rng.sample(groups, min(size, len(groups))))
        fixed = {x: dv for x, dv in a.device_of_group.items() if x not in free}
        again = _solve_component(p, d, comp, min(step, end - b.spent()), b, a, fixed=fixed)
        steps += 1
        if again.device_of_group and again.objective_ms < a.objective_ms - 1e-12:
            improved += 1
            bound = a.bound_ms
            a = again; a.bound_ms = bound
            print(f"  step {steps} size {size} -> {a.objective_ms:.5f} (spent {b.spent():.1f})", flush=True)
        if again.status == "optimal":
            size = min(len(groups), int(size * 1.25) + 1)
        else:
            size = max(2, int(size / 1.25))
    print("lns steps", steps, "improved", improved)
print(name, mode, "final", a.objective_ms, "bound", a.bound_ms, "spent", round(b.spent(), 1))
