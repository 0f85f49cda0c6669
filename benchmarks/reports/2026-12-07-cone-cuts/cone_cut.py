import json, sys, time
from placer.bounds import Costs
from placer.budget import Budget
from placer.cone_bounds import _cone, _solve_cone
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec
name, op, secs, lo, hi = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); v = p.ops.index(op); c = Costs.of(p)
preds = [[p.edges[i].src for i in p.preds[k]] for k in range(p.n_ops)]
# ancestors by latest head first: each prefix of this order is a cone closed under "between"
import heapq
seen = {v}; heap = [(-c.head[u], u) for u in set(preds[v])]; heapq.heapify(heap); order = [v]
while heap and len(order) < hi:
    _, u = heapq.heappop(heap)
    if u in seen: continue
    seen.add(u); order.append(u)
    for w in preds[u]:
        if w not in seen: heapq.heappush(heap, (-c.head[w], w))
def frontier(ops):
    s = set(ops); return sum(1 for k in ops if any(w not in s for w in preds[k]) or not preds[k])
fr = [(frontier(order[:n]), -n) for n in range(lo, len(order) + 1)]
print('frontier by size', [(n, frontier(order[:n])) for n in range(lo, len(order) + 1, 10)])
best = min(fr); n = -best[1]
for ops, label in ((order[:n], f'head-order min frontier {best[0]} at {n}'), (_cone(p, v, n, False), f'bfs {n} frontier {frontier(_cone(p, v, n, False))}')):
    t = time.perf_counter()
    got = _solve_cone(p, Budget(secs, threads=1, deterministic=True), secs, v, sorted(ops), list(c.head), False)
    print(f"{op} {label}: {got:.4f} (+{got - c.head[v]:.4f}, {time.perf_counter() - t:.1f} s)", flush=True)
