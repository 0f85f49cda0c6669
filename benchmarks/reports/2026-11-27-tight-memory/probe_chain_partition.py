"""A memory-balanced chain partition as a start (tried, not kept): groups in topological
order of their first op (a Problem lists its ops so), cut into contiguous blocks of about
total/n memory (never above a device's capacity) along the device chain, resequenced;
HEFT beside it.

    PYTHONPATH=../../..:../2026-11-27-kicks python probe_chain_partition.py CASE...
"""
import sys

from cases import problem  # ../2026-11-27-kicks/cases.py
from placer.heuristics import _device_chain, heft, resequence
from placer.repair import memory_overflow

for name in sys.argv[1:]:
    p = problem(name)
    groups = sorted(range(len(p.groups)), key=lambda g: min(p.groups[g]))  # ops are in topological order
    memory = [p.group_memory_bytes(g) for g in range(len(p.groups))]
    capacity = min(c for c in p.capacity_bytes)
    chain = _device_chain(p)
    for share in (1.0, 1.05):
        target = share * sum(memory) / p.n_devices
        device_of_group, j, used = {}, 0, 0
        for g in groups:
            if (used + memory[g] > target and used > 0 and j < p.n_devices - 1) or used + memory[g] > capacity:
                j, used = j + 1, 0
            device_of_group[g] = chain[min(j, p.n_devices - 1)]
            used += memory[g]
        device = [device_of_group[p.group[k]] for k in range(p.n_ops)]
        s = resequence(p, device)
        print(name, share, "overflow", sum(memory_overflow(p, device)), "devices used", len(set(device)),
              "makespan", s and round(s.makespan_ms, 3), flush=True)
    h = heft(p)
    print("  heft", h and round(h.makespan_ms, 3))
