"""probe: memory-balanced contiguous partition of groups (topological order) along the device chain, resequenced"""
import sys, time
sys.path.insert(0, '/work/main/benchmarks/reports/2026-11-27-kicks')
from cases import problem
from placer.heuristics import resequence, _device_chain, heft
from placer.repair import memory_overflow
from placer.local_search import improve_by_moves
from placer.schedule import earliest_times
for name in sys.argv[1:]:
    p = problem(name)
    order = p.topological_order if hasattr(p, 'topological_order') else None
    # topo order
    import collections
    indeg = [len(p.preds[k]) for k in range(p.n_ops)]
    q = collections.deque(k for k in range(p.n_ops) if indeg[k] == 0); topo = []
    while q:
        k = q.popleft(); topo.append(k)
        for i in p.succs[k]:
            v = p.edges[i].dst; indeg[v] -= 1
            if indeg[v] == 0: q.append(v)
    pos = {k: i for i, k in enumerate(topo)}
    gfirst = sorted(range(len(p.groups)), key=lambda g: min(pos[k] for k in p.groups[g]))
    mem = [p.group_memory_bytes(g) for g in range(len(p.groups))]
    total = sum(mem); cap = min(c for c in p.capacity_bytes)
    chain = _device_chain(p)
    for share in (1.0, 1.05):
        target = share * total / p.n_devices
        dev_of_g = {}; j = 0; used = 0
        for g in gfirst:
            if (used + mem[g] > target and used > 0 and j < p.n_devices - 1) or used + mem[g] > cap:
                j += 1; used = 0
            dev_of_g[g] = chain[min(j, p.n_devices-1)]; used += mem[g]
        device = [dev_of_g[p.group[k]] for k in range(p.n_ops)]
        over = sum(memory_overflow(p, device))
        t = time.perf_counter()
        s = resequence(p, device)
        print(name, share, "overflow", over, "devices used", len(set(device)), "makespan", s and round(s.makespan_ms, 3), f"{time.perf_counter()-t:.2f}s", flush=True)
    h = heft(p); print("  heft", h and round(h.makespan_ms, 3))
