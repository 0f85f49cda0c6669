"""Probe: solve the biggest weakly connected component alone, fix its groups' devices, then
CP-SAT on the whole graph with those devices fixed (the other component free where its groups are)."""
import json, sys, time, dataclasses
import networkx as nx
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec, parse_graph, parse_hardware, load_json
from placer.model import build_problem
from placer.budget import Budget
from placer.schedule import retime
from placer.heuristics import heft
from placer.formulations.cpsat_model import build_cpsat
from placer.bounds import lower_bound_ms
name, secs1, secs2 = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
gd = json.load(open(f"/tmp/q/cases/{name}.graph.json")); hd = json.load(open(f"/tmp/q/cases/{name}.hw.json"))
G = nx.DiGraph(); G.add_nodes_from(o["id"] for o in gd["ops"]); G.add_edges_from((e["src"], e["dst"]) for e in gd["edges"])
comps = sorted(nx.weakly_connected_components(G), key=len, reverse=True)
c1 = comps[0]
sub = dict(gd, ops=[o for o in gd["ops"] if o["id"] in c1], edges=[e for e in gd["edges"] if e["src"] in c1])
r = place(GraphSpec.model_validate(sub), HardwareSpec.model_validate(hd), PlaceOptions(time_limit_s=secs1, deterministic=True))
print("comp1", len(c1), round(r.makespan_ms, 3), "bound", round(r.lower_bound_ms, 3), flush=True)
where = {s.op: s.device for s in r.schedule}
p = build_problem(parse_graph(gd), parse_hardware(hd))
didx = {d: i for i, d in enumerate(p.devices)}
allowed = []
for g, ops in enumerate(p.groups):
    ds = {didx[where[p.ops[k]]] for k in ops if p.ops[k] in where}
    assert len(ds) <= 1
    allowed.append(sorted(ds) if ds else p.allowed[g])
q = dataclasses.replace(p, allowed=allowed)
h = heft(q)
print("heft restricted", None if h is None else round(h.makespan_ms, 3), flush=True)
t = time.time()
f = build_cpsat(q, h, lower_bound_ms(q), redundant_cumulative=False, symmetry_breaking=False)
print("built", f"{time.time()-t:.1f}s", flush=True)
B = Budget(secs2 + 30, deterministic=True, threads=1)
run, solver = B.solve_cpsat(f.model, secs2)
print(run.status, flush=True)
if run.has_solution:
    s = retime(p, f.decode(solver.value, q))
    print("overlay schedule", round(s.makespan_ms, 4), "bound (these devices)", round(f.lower_bound_ms(run.bound or 0), 4))
