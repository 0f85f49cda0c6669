"""Probe: part_sched.py NAME RES SECS FIRST [rest]: keep the ops reachable from FIRST (with `rest`,
the others), fix each where RES puts it or its colocation mate, schedule exactly."""
import json, sys, collections, os
here = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [here, os.path.join(here, '..', '2026-12-05-path-priority')]
from component import part
from fixed_placement import fixed_schedule
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
name, res, secs, first = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
gj = part(name, first, reachable=len(sys.argv) <= 5 or sys.argv[5] != 'rest')
pl = json.load(open(res))['placement']
g = GraphSpec.model_validate(gj); h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
# groups of the full graph: a kept op's device is its mate's
full = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
grp = {o['id']: o.get('group') for o in full['ops']}
bygrp = collections.defaultdict(list)
for o, gname in grp.items(): bygrp[gname].append(o)
dev = []
for op in p.ops:
    d = pl.get(op) or next((pl[x] for x in bygrp[grp[op]] if x in pl and grp[op] is not None), None) or 'gpu0'
    dev.append(p.device_index[d])
print(len(p.ops), 'ops:', fixed_schedule(p, dev, secs))
