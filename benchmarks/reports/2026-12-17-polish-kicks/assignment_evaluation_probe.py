import json, sys, time, itertools
from pathlib import Path
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec
from placer.heuristics import resequence, justify
name = "gnmt_b32-msr-form_v100x4_nvlink"
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
r = json.load(open(f"/tmp/g/{name}.det.json"))
dev = [p.device_index[r["placement"][o]] for o in p.ops]
work = [sum(p.time_ms[k][0] for k in grp) for grp in p.groups]
order = sorted(range(len(p.groups)), key=lambda x: -work[x])
for gi in order: print(gi, p.group_names[gi], round(work[gi],3), len(p.groups[gi]), dev[p.groups[gi][0]])
print("devices", p.devices, "allowed", set(map(tuple,p.allowed)))
t=time.perf_counter(); s=resequence(p, dev); t1=time.perf_counter()-t
t=time.perf_counter(); j=justify(p, s); t2=time.perf_counter()-t
print("answer", r["makespan_ms"], "reseq", s.makespan_ms, f"{t1*1000:.1f}ms", "justified", j.makespan_ms, f"{t2*1000:.1f}ms")
