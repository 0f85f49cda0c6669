"""Probe: a graph of two weakly connected components joined only by groups, restricted by barriers
(virtual zero-time ops every path of both passes through) at pairs of time cuts, solved by the
engine; the answer's placement and order re-timed on the original graph."""
import json, sys, time
import networkx as nx
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec, parse_graph, parse_hardware, load_json
from placer.model import build_problem
from placer.decompose import decompose
from placer.schedule import Solution, retime
name, secs = sys.argv[1], float(sys.argv[2])
scales = [float(x) for x in sys.argv[3].split(",")]
gd = json.load(open(f"/tmp/q/cases/{name}.graph.json")); hd = json.load(open(f"/tmp/q/cases/{name}.hw.json"))
p0 = build_problem(parse_graph(gd), parse_hardware(hd))
G = nx.DiGraph(); G.add_nodes_from(o["id"] for o in gd["ops"]); G.add_edges_from((e["src"], e["dst"]) for e in gd["edges"])
comps = sorted(nx.weakly_connected_components(G), key=len, reverse=True)[:2]
idx = {o: k for k, o in enumerate(p0.ops)}
def info(c):
    sub = dict(gd, ops=[o for o in gd["ops"] if o["id"] in c], edges=[e for e in gd["edges"] if e["src"] in c])
    p = build_problem(parse_graph(sub), parse_hardware(hd))
    dec = decompose(p, min_cuts=1)
    head = {}
    for v in nx.topological_sort(G.subgraph(c)):
        head[v] = max((head[u] + p0.time_ms[idx[u]][0] for u in G.predecessors(v)), default=0.0)
    end = max(head[v] + p0.time_ms[idx[v]][0] for v in c)
    cuts = [p.ops[k] for k in dec.cuts] if dec else []
    return cuts, head, end
(ca, ha, ea), (cb, hb, eb) = info(comps[0]), info(comps[1])
if eb > ea:
    (ca, ha, ea), (cb, hb, eb) = (cb, hb, eb), (ca, ha, ea)
print("long", ea, len(ca), "cuts; short", eb, len(cb), "cuts", flush=True)
for s in scales:
    pairs, last_a = [], -1
    ta = [ha[x] for x in ca]
    for f in cb:
        t = s * hb[f]
        j = min(range(len(ca)), key=lambda j: abs(ta[j] - t))
        if j > last_a:
            pairs.append((f, ca[j])); last_a = j
    g2 = dict(gd, ops=list(gd["ops"]), edges=list(gd["edges"]))
    for i, (f, b) in enumerate(pairs):
        bar = f"__barrier{i}"
        g2["ops"].append({"id": bar, "time_ms": 0.0, "memory_bytes": 0})
        g2["edges"] += [{"src": f, "dst": bar, "bytes": 0}, {"src": b, "dst": bar, "bytes": 0}]
        g2["edges"] += [{"src": bar, "dst": v, "bytes": 0} for v in list(G.successors(f)) + list(G.successors(b))]
    t0 = time.time()
    r = place(GraphSpec.model_validate(g2), HardwareSpec.model_validate(hd), PlaceOptions(time_limit_s=secs, deterministic=True))
    didx = {d: i for i, d in enumerate(p0.devices)}
    device = [0] * p0.n_ops; start = [0.0] * p0.n_ops
    for e in r.schedule:
        if e.op in idx:
            device[idx[e.op]] = didx[e.device]; start[idx[e.op]] = e.start_ms
    order = [sorted((k for k in range(p0.n_ops) if device[k] == d), key=lambda k: (start[k], k)) for d in range(p0.n_devices)]
    sch = retime(p0, Solution(device=device, order=order))
    print(f"scale {s}: {len(pairs)} barriers, restricted {r.makespan_ms:.3f} (bound {r.lower_bound_ms:.3f}, {r.stats.best_from}), "
          f"re-timed on the original {sch.makespan_ms:.3f}  {time.time()-t0:.0f}s", flush=True)
