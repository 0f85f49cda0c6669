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
starts = {"single": H.single_device(p), "stages": H.stages(p, math.inf, 300), "heft": H.heft(p)}
for label, st in starts.items():
    if st is None: continue
    for ev in (3000, 10000):
        t0 = time.perf_counter()
        m, counts = improve_by_moves(p, st, math.inf, ev)
        print(label, round(st.makespan_ms, 4), ev, "->", round(m.makespan_ms, 4), counts, f"{time.perf_counter()-t0:.1f}s")
