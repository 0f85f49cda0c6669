"""Prototype: energetic reasoning on heads/tails, group contributions capped at the interval."""
import json, sys, time
import numpy as np
from placer.schema import parse_graph, parse_hardware
from placer.model import build_problem
from placer.bounds import Costs, bound_breakdown

name = sys.argv[1]
g = parse_graph(json.load(open(f'/tmp/q/cases/{name}.graph.json')))
h = parse_hardware(json.load(open(f'/tmp/q/cases/{name}.hw.json')))
p = build_problem(g, h)
c = Costs.of(p)
named = bound_breakdown(p); base = max(named.values())
print('base', round(base, 4), max(named, key=named.get), p.n_ops)
r = np.array(c.head); q = np.array(c.tail); pt = np.array(c.fastest)
gid = np.zeros(p.n_ops, dtype=int)
for gi, ops in enumerate(p.groups):
    for k in ops: gid[k] = gi
G = len(p.groups); m = p.n_devices

def violated(T):
    d = T - q
    A = np.unique(r); B = np.unique(d)
    for a in A:
        Bs = B[B > a]
        if len(Bs) == 0: continue
        L = Bs - a  # (nb,)
        # per op per b: min overlap
        left = r[None, :] + pt[None, :] - a          # if scheduled as early as possible
        right = Bs[:, None] - (d[None, :] - pt[None, :])  # as late as possible
        ov = np.minimum(np.minimum(L[:, None], pt[None, :]), np.minimum(left, right))
        ov = np.maximum(ov, 0.0)
        # group caps
        per_group = np.zeros((len(Bs), G))
        for j in range(len(Bs)):
            per_group[j] = np.bincount(gid, weights=ov[j], minlength=G)
        capped = np.minimum(per_group, L[:, None]).sum(axis=1)
        if np.any(capped > m * L + 1e-9):
            j = int(np.argmax(capped - m * L))
            return (a, Bs[j], capped[j], m * L[j])
    return None

lo, hi = base, float(sys.argv[2])
t0 = time.time()
print('at base', violated(base))
for _ in range(14):
    mid = (lo + hi) / 2
    v = violated(mid)
    print(f'T={mid:.4f} violated={v is not None} {time.time()-t0:.1f}s')
    if v is not None: lo = mid
    else: hi = mid
print('bound', lo)
