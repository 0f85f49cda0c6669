"""Before/after time cuts of every benchmark case: the decomposition with and without bridges.
Usage: PYTHONPATH=. python scan_bridges.py (cases from ../2026-11-26-windows-extend/dump_cases.py)."""
import json, glob, os
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
import placer.decompose as D
seen = set()
for f in sorted(glob.glob("/tmp/q/cases/*.graph.json")):
    name = os.path.basename(f)[:-len(".graph.json")]
    key = open(f).read()
    h = hash(key)
    if h in seen: continue
    seen.add(h)
    g = GraphSpec.model_validate(json.loads(key))
    hw = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    p = build_problem(g, hw)
    dec = D.decompose(p)
    orig = D._bridges
    D._bridges = lambda problem, is_out: []
    dec0 = D.decompose(p)
    D._bridges = orig
    a = (len(dec0.cuts), len(dec0.components)) if dec0 else None
    b = (len(dec.cuts), len(dec.components), len(dec.bridges)) if dec else None
    if a != (b[:2] if b else None):
        print(name, "before", a, "after", b, flush=True)
print("done")
