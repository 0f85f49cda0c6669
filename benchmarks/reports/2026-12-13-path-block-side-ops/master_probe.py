"""Capture the chain_loads master's group -> device choice in a det engine run, then solve with those groups pinned."""
import inspect, json, sys, time
from pathlib import Path
import placer.chain_loads as CL
import placer.decompose as D
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem

captured = {}
src = inspect.getsource(CL.chain_loads)
src = src.replace("    return base_ms + max(0.0, math.floor(run.bound + 1e-9)) * unit",
                  "    captured['on'] = {g: d for g, lits in on.items() for d, l in lits.items() if solver.Value(l)}\n"
                  "    captured['obj'] = base_ms + run.objective * unit if hasattr(run, 'objective') else None\n"
                  "    return base_ms + max(0.0, math.floor(run.bound + 1e-9)) * unit")
src = src.replace("run, _ = budget.solve_cpsat(m, time_limit_s)", "run, solver = budget.solve_cpsat(m, time_limit_s)")
ns = dict(vars(CL)); ns["captured"] = captured
exec(src, ns)
D.chain_loads = ns["chain_loads"]

name = sys.argv[1]
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
print("engine", r.makespan_ms, r.lower_bound_ms, flush=True)
p = build_problem(g, h)
on = captured["on"]
print("master groups", len(on), "devices used", sorted(set(on.values())), captured.get("obj"))
gd = json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text())
index = {o["id"]: k for k, o in enumerate(gd["ops"])}
# problem op order may differ from the json order: map by id
ids = p.ops
print("problem has op ids:", ids is not None)
for o in gd["ops"]:
    k = ids.index(o["id"])
    gr = p.group[k]
    if gr in on:
        o["device"] = p.devices[on[gr]]
g2 = GraphSpec.model_validate(gd)
r2 = place(g2, h, PlaceOptions(time_limit_s=60, deterministic=True))
print("pinned to master", r2.makespan_ms, r2.lower_bound_ms, r2.stats.best_from, flush=True)
