"""dangling_share.py: per case in /tmp/q/cases, the time cuts, components and the share of the work the
series decomposition sets aside as dangling (logs/dangling_share.txt)."""
import glob, os
from cases import CASES, problem
from placer.decompose import decompose
names = sorted({os.path.basename(f)[:-len(".graph.json")] for f in glob.glob(f"{CASES}/*.graph.json")})
for name in names:
    if "sub4" in name: continue
    p = problem(name)
    if p.n_ops < 100: continue
    d = decompose(p)
    work = sum(p.min_time_ms(k) for k in range(p.n_ops))
    if d is None:
        print(f"{name:55s} {p.n_ops:5d} no decomposition"); continue
    dw = sum(p.min_time_ms(k) for k in d.dangling)
    print(f"{name:55s} {p.n_ops:5d} cuts {len(d.cuts):4d} comps {len(d.components):4d} dangling {len(d.dangling):5d} ops {100*dw/work:5.1f}% work")
