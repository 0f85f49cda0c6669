"""Prototype: min over group->device assignments of max over devices of JPS(ops on device)."""
import json, sys, time, math
from placer.schema import parse_graph, parse_hardware
from placer.model import build_problem
from placer.bounds import Costs, bound_breakdown, _preemptive_one_machine_ms, _group_work_ms

name = sys.argv[1]; top = int(sys.argv[2]) if len(sys.argv) > 2 else 16
g = parse_graph(json.load(open(f'/tmp/q/cases/{name}.graph.json')))
h = parse_hardware(json.load(open(f'/tmp/q/cases/{name}.hw.json')))
p = build_problem(g, h)
c = Costs.of(p)
named = bound_breakdown(p)
base = max(named.values())
print('base', round(base, 4), max(named, key=named.get))
work = [_group_work_ms(p, gi) for gi in range(len(p.groups))]
order = sorted(range(len(p.groups)), key=lambda gi: -work[gi])[:top]
print('top works', [round(work[gi], 2) for gi in order])
m = p.n_devices
jobs = {gi: [(c.head[k], c.fastest[k], c.tail[k]) for k in p.groups[gi]] for gi in order}

def feasible(T, node_limit=2_000_000):
    """Is there an assignment of `order` with every device's JPS < T? None = gave up."""
    loads = [[] for _ in range(m)]
    nodes = 0
    def dfs(i, used):
        nonlocal nodes
        nodes += 1
        if nodes > node_limit:
            raise TimeoutError
        if i == len(order):
            return True
        gi = order[i]
        for d in range(min(used + 1, m)):
            cand = loads[d] + jobs[gi]
            if _preemptive_one_machine_ms(cand) >= T:
                continue
            loads[d] = cand
            if dfs(i + 1, max(used, d + 1)):
                return True
            loads[d] = cand[:-len(jobs[gi])]
        return False
    try:
        return dfs(0, 0), nodes
    except TimeoutError:
        return None, nodes

lo, hi = base, float(sys.argv[3]) if len(sys.argv) > 3 else base * 1.3
t0 = time.time()
for _ in range(20):
    mid = (lo + hi) / 2
    ok, nodes = feasible(mid)
    print(f'T={mid:.4f} feasible={ok} nodes={nodes} {time.time()-t0:.1f}s')
    if ok is None or ok:
        hi = mid
    else:
        lo = mid
print('bound', lo)
