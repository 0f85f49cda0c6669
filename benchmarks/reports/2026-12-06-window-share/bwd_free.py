"""Probe: bwd_free.py NAME SECS FIRST: the graph without the ops reachable from FIRST (the
backward component when FIRST is the forward pass's input), engine deterministic SECS."""
import json, sys, os
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from component import part
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name, secs, first = sys.argv[1], float(sys.argv[2]), sys.argv[3]
gj = part(name, first, reachable=False)
print('ops left', len(gj['ops']))
g = GraphSpec.model_validate(gj)
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=True))
print(name, 'bwd only', r.makespan_ms, r.lower_bound_ms, r.stats.best_from, r.stats.tight_bound)
json.dump(r.model_dump(mode="json"), open(f"/tmp/q/s28/bwdonly_{name}.json", "w"))
