"""Time cuts of a case with ops off the longest path set aside at several stretch ratios (the
probe behind placer.decompose._bridges' thresholds). Usage: probe_bridge_stretch.py NAME"""
import json, sys
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.decompose import decompose, _dangling
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
n = p.n_ops
dang, _ = _dangling(p); isd = [False]*n
for k in dang: isd[k] = True
core = [k for k in range(n) if not isd[k]]
eps = 1e-6
# longest path with eps weights among core
best = [0.0]*n; prev = [-1]*n
for k in core:
    b, pv = 0.0, -1
    for i in p.preds[k]:
        u = p.edges[i].src
        if not isd[u] and best[u] > b: b, pv = best[u], u
    best[k] = b + p.min_time_ms(k) + eps; prev[k] = pv
k = max(core, key=best.__getitem__); P = []
while k >= 0: P.append(k); k = prev[k]
P.reverse(); idx = {k: i for i, k in enumerate(P)}
a = [-1]*n; b = [len(P)]*n
for k in core:
    if k in idx: a[k] = idx[k]; continue
    a[k] = max([a[p.edges[i].src] for i in p.preds[k] if not isd[p.edges[i].src]], default=-1)
for k in reversed(core):
    if k in idx: b[k] = idx[k]; continue
    b[k] = min([b[p.edges[i].dst] for i in p.succs[k] if not isd[p.edges[i].dst]], default=len(P))
head = [0.0]*len(P); t = 0.0
for i, k in enumerate(P): head[i] = t; t += p.min_time_ms(k)
def window(x):
    s = head[a[x]] + p.min_time_ms(P[a[x]]) if a[x] >= 0 else 0.0
    e = head[b[x]] if b[x] < len(P) else t
    return e - s
off = [x for x in core if x not in idx]
cover = [0]*(len(P)+1)
for x in off:
    cover[a[x]+1] += 1; cover[b[x]] -= 1
run = 0; cuts0 = 0
for i in range(len(P)):
    run += cover[i]; cuts0 += run == 0
print("P len", len(P), "ms", round(t,3), "cuts (exact)", cuts0, "decompose:", len(decompose(p,1).cuts) if decompose(p,1) else None, "off-path core", len(off))
for ratio in (1.5, 2, 4, 10):
    br = [x for x in off if window(x) >= ratio * p.min_time_ms(x) and b[x] - a[x] >= 3]
    cover = [0]*(len(P)+1)
    bs = set(br)
    for x in off:
        if x in bs: continue
        cover[a[x]+1] += 1; cover[b[x]] -= 1
    run = 0; cuts = 0
    for i in range(len(P)):
        run += cover[i]; cuts += run == 0
    print(f"ratio {ratio}: bridges {len(br)} work {sum(p.min_time_ms(x) for x in br):.3f} ms of total {sum(p.min_time_ms(x) for x in core):.3f}; cuts {cuts}")
