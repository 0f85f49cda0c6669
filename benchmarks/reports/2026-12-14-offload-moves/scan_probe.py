"""Probe: every 2-stage split of the critical path's groups (prefix on one device, the rest on the
next; and suffix), list scheduled like placer.heuristics.stages; then group moves from the best."""
import json, sys, time, math
from pathlib import Path
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer import heuristics as H
from placer.local_search import improve_by_moves
name = sys.argv[1]
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
t0 = time.perf_counter()
st = H.stages(p, math.inf, 300)
print("stages", st.makespan_ms, f"{time.perf_counter()-t0:.1f}s")
groups, weight, off = H._path_groups(p)
chain = H._device_chain(p)
prio = H.upward_rank(p)
best = None; t0 = time.perf_counter(); n = 0
for cut in range(1, len(groups)):
    forced = {gg: chain[0] if i < cut else chain[1] for i, gg in enumerate(groups)}
    s = H._list_schedule(p, prio, forced); n += 1
    if s is not None and (best is None or s.makespan_ms < best[0].makespan_ms):
        best = (s, cut)
print("scan", len(groups), "groups", best[0].makespan_ms, "cut", best[1], f"{time.perf_counter()-t0:.1f}s {n} evals")
for start, label in ((st, "stages"), (best[0], "scan")):
    t0 = time.perf_counter()
    m, counts = improve_by_moves(p, start, math.inf, 3000)
    print("moves from", label, m.makespan_ms, f"{time.perf_counter()-t0:.1f}s")
