"""component_hint_probe.py NAME SECS: the first distinct decomposition component, one deterministic solve
hinted with the better of HEFT and critical path (as the engine hints its first pass)."""
import json, sys
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.decompose import decompose, _solve_component, orbit_representatives
from placer.heuristics import heft, critical_path
from placer.budget import Budget
name, first = sys.argv[1], float(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
d = decompose(p)
reps = orbit_representatives(p)
hs = [heft(p), critical_path(p)]
best = min((s for s in hs if s), key=lambda s: s.makespan_ms)
print("hint makespan", best.makespan_ms, flush=True)
b = Budget(1000, deterministic=True, threads=1)
a = _solve_component(p, d, d.components[0], first, b, best.solution, representatives=reps)
print("hinted first", a.objective_ms, a.bound_ms, "spent", round(b.spent(), 1), flush=True)
