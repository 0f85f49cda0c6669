"""dangling_share.py: per case in /tmp/q/cases, the time cuts, components and the share of the work the
series decomposition sets aside as dangling (logs/dangling_share.txt)."""
import json, sys, glob, os
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.decompose import decompose
names = sorted({os.path.basename(f)[:-len(".graph.json")] for f in glob.glob("/tmp/q/cases/*.graph.json")} )
for name in names:
    if "sub4" in name: continue
    g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
    h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    p = build_problem(g, h)
    if p.n_ops < 100: continue
    d = decompose(p)
    work = sum(p.min_time_ms(k) for k in range(p.n_ops))
    if d is None:
        print(f"{name:55s} {p.n_ops:5d} no decomposition"); continue
    dw = sum(p.min_time_ms(k) for k in d.dangling)
    print(f"{name:55s} {p.n_ops:5d} cuts {len(d.cuts):4d} comps {len(d.components):4d} dangling {len(d.dangling):5d} ops {100*dw/work:5.1f}% work")
