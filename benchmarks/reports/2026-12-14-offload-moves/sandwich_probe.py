"""Probe: split the critical path into segments p_a..p_b; every op between them (a descendant
of p_a and an ancestor of p_b) runs inside [start p_a, end p_b], so that span is at least the
optimum of the sandwich's sub-model. Sum over consecutive segments + head + tail."""
import json, sys, time
from pathlib import Path
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer import bounds as B
from placer.budget import Budget
from placer.sub_model import sub_model
from solvers import SolveStatus

name = sys.argv[1]; S = int(sys.argv[2]); step = float(sys.argv[3])
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
c = B.Costs.of(p)
path = B.longest_path(p, c.fastest)
desc = p.descendants
anc = [0] * p.n_ops
for k in range(p.n_ops):
    bits = 0
    for e in p.preds[k]:
        u = p.edges[e].src
        bits |= anc[u] | (1 << u)
    anc[k] = bits
def sandwich(a, b):
    bits = (desc[a] & anc[b]) | (1 << a) | (1 << b)
    return [k for k in range(p.n_ops) if bits >> k & 1]
budget = Budget(1e9, deterministic=True, threads=1)
total = c.head[path[0]] + c.tail[path[-1]]
plain = total
i = 0; segs = 0; t0 = time.perf_counter()
while i < len(path):
    # grow j while the sandwich stays within S ops
    j = i
    while j + 1 < len(path) and len(sandwich(path[i], path[j + 1])) <= S:
        j += 1
    ops = sandwich(path[i], path[j])
    seg_path = sum(c.fastest[k] for k in path[i:j + 1])
    horizon = sum(c.fastest[k] for k in ops) + 1e-6
    sub = sub_model(p, ops, horizon, {k: 0.0 for k in ops})
    sub.model.minimize(sub.finish[path[j]])
    import os
    mode = os.environ.get("MODE", "plain")
    opts = dict(presolve=False, linear_relaxation=False) if mode == "plain" else dict(bound_search=True) if mode == "tree" else dict(presolve=False, linear_relaxation=False, bound_search=True)
    run, _ = budget.solve_cpsat(sub.model, step, **opts)
    lb = seg_path if run.bound is None else max(seg_path, run.bound * sub.tick)
    total += lb; plain += seg_path; segs += 1
    if len(sys.argv) > 4:
        print(f"  seg {i}-{j} ops {len(ops)} path {seg_path:.4f} lb {lb:.4f} +{lb-seg_path:.4f} {run.status}")
    i = j + 1
print(f"{name}: S={S} step={step} segments {segs} path {plain:.4f} sandwich-sum {total:.4f} in {time.perf_counter()-t0:.1f}s work {budget.work:.1f}")
