"""Probe: everything on one device but a prefix (or suffix) of the critical path's groups, which go
to a second device (every off-path group of the graph stays with the main device); resequenced."""
import json, sys, time
from pathlib import Path
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer import heuristics as H
name = sys.argv[1]
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
groups, weight, off = H._path_groups(p)
chain = H._device_chain(p)
t0 = time.perf_counter(); res = []
for side in ("prefix", "suffix"):
    for k in range(1, len(groups)):
        moved = groups[:k] if side == "prefix" else groups[-k:]
        device = [chain[0]] * p.n_ops
        for gg in moved:
            for op in p.groups[gg]:
                device[op] = chain[1]
        s = H.resequence(p, device)
        if s is not None:
            res.append((s.makespan_ms, side, k))
res.sort()
print(name, "single", H.single_device(p).makespan_ms, "best", res[:5], f"{time.perf_counter()-t0:.1f}s {len(res)} evals")
