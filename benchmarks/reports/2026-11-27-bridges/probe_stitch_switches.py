"""The stitch alone (no resequencing, no component moves) of a case: its makespan, with bridges or
every dangling op at zero time, and the device changes between consecutive time cuts joined
directly. Usage: probe_stitch_switches.py NAME"""
import json, sys, dataclasses
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
import placer.decompose as D
from placer.heuristics import heft
from placer.schedule import retime
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); dec = D.decompose(p)
D.resequence = lambda problem, device: None
D._relabel_components = lambda problem, dec, stitch, schedule, budget, deadline: schedule
ans = D.solve_decomposed(p, dec, Budget(20, deterministic=True), 20, heft(p).solution)
s = ans.schedule
print("stitched", s.makespan_ms)
def variant(zero_ops):
    tm = [list(row) for row in p.time_ms]
    for k in zero_ops: tm[k] = [0.0] * len(tm[k])
    return dataclasses.replace(p, time_ms=tm)
print("bridges at zero:", retime(variant(dec.bridges), s.solution).makespan_ms)
print("all dangling at zero:", retime(variant(set(dec.dangling)), s.solution).makespan_ms)
print("bridge work", sum(p.min_time_ms(k) for k in dec.bridges), "dangling work", sum(p.min_time_ms(k) for k in dec.dangling))
dev = s.solution.device
tot = 0.0; n = 0
for a, b in zip(dec.cuts, dec.cuts[1:]):
    if dev[a] != dev[b]:
        for i in p.succs[a]:
            e = p.edges[i]
            if e.dst == b:
                tot += p.delay_ms(e, dev[a], dev[b]); n += 1
print("consecutive cut pairs joined directly on different devices:", n, "delay sum", round(tot, 3))
# per segment: span in the stitched schedule vs the component's local objective
st, en = s.start_ms, s.end_ms
spans = []
for j, ops in enumerate(dec.segments):
    if not ops: continue
    entry, exit_ = dec.boundary(j)
    b = en[entry] if entry is not None else 0.0
    f = st[exit_] if exit_ is not None else max(en[k] for k in ops)
    spans.append((j, f - b))
print("sum of segment spans", round(sum(x for _, x in spans), 3), "cuts", round(sum(p.time_ms[c][dev[c]] for c in dec.cuts), 3))
gaps = 0.0
for a, b in zip(dec.cuts, dec.cuts[1:]):
    j = dec.cuts.index(b)
    if not dec.segments[j]:
        gaps += st[b] - en[a]
print("idle between consecutive cuts", round(gaps, 3))
print("memory exceeds a device:", p.memory_exceeds_a_device())
comp_groups = set(g for a in ans.stats.__dict__ and [] for g in [])
cut_groups_in_comps = 0
from placer.decompose import _local_segments
for a, b in zip(dec.cuts, dec.cuts[1:]):
    if dev[a] != dev[b]:
        j = dec.cuts.index(b)
        shared_a = len(p.groups[p.group[a]]) > 1; shared_b = len(p.groups[p.group[b]]) > 1
        print(" switch", p.ops[a], "->", p.ops[b], "groups sizes", len(p.groups[p.group[a]]), len(p.groups[p.group[b]]), "seg before b empty", not dec.segments[j])
        cut_groups_in_comps += 1
        if cut_groups_in_comps > 8: break
