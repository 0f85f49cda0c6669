"""component_hint_probe.py NAME SECS: the first distinct decomposition component, one deterministic solve
hinted with the better of HEFT and critical path (as the engine hints its first pass)."""
import sys
from cases import decomposed
from placer.decompose import _solve_component
from placer.heuristics import heft, critical_path
name, first = sys.argv[1], float(sys.argv[2])
p, d, reps, b = decomposed(name)
hs = [heft(p), critical_path(p)]
best = min((s for s in hs if s), key=lambda s: s.makespan_ms)
print("hint makespan", best.makespan_ms, flush=True)
a = _solve_component(p, d, d.components[0], first, b, best.solution, representatives=reps)
print("hinted first", a.objective_ms, a.bound_ms, "spent", round(b.spent(), 1), flush=True)
