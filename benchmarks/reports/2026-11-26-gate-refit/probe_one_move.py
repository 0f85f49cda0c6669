"""Single group moves from HEFT's placement, each scheduled four ways (re-timed in HEFT's
order, that justified, resequenced, HEFT's own list schedule with the placement forced).

Usage: PYTHONPATH=. python probe_one_move.py gnmt_b32-msr-form_v100x4_nvlink"""
import json, sys
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
import placer.heuristics as H
from placer.schedule import retime, solution_from_starts
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
hs = H.heft(p); up = H.upward_rank(p)
gid = {g.ops[ops[0]].group: x for x, ops in enumerate(p.groups)}
for grp, d in [("decoder.lstm2", 2), ("decoder.lstm2", 1), ("encoder.lstm1", 2), ("decoder.lstm0", 2), ("encoder.lstm0_bw", 2)]:
    x = gid[grp]
    dev = list(hs.solution.device)
    for k in p.groups[x]: dev[k] = d
    rt = retime(p, solution_from_starts(p, dev, hs.start_ms))
    rs = H.resequence(p, dev)
    ls = H._list_schedule(p, up, {y: dev[p.groups[y][0]] for y in range(len(p.groups))})
    print(grp, "->", d, "retime", round(rt.makespan_ms, 3), "justified", round(H.justify(p, rt).makespan_ms, 3), "reseq", round(rs.makespan_ms, 3), "list", round(ls.makespan_ms, 3))
