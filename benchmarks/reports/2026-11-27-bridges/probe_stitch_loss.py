"""Where msr BERT-12 loses between the decomposition parts and its answer: the answer re-timed
with dangling ops at zero time, with their edges free, with core edges across a cut free, with
every transfer free. Usage: probe_stitch_loss.py NAME"""
import json, sys, dataclasses
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
from placer.decompose import decompose, solve_decomposed
from placer.heuristics import heft
from placer.schedule import retime
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h); dec = decompose(p)
ans = solve_decomposed(p, dec, Budget(20, deterministic=True), 20, heft(p).solution)
s = ans.schedule
print("bound", ans.bound_ms, "answer", s.makespan_ms, "parts", ans.stats.decomposition_parts_ms, "stitched", ans.stats.decomposition_stitched_ms)
dang = set(dec.dangling)
def variant(zero_ops, zero_delay_from):
    tm = [list(row) for row in p.time_ms]
    for k in zero_ops: tm[k] = [0.0] * len(tm[k])
    q = dataclasses.replace(p, time_ms=tm)
    return q
q1 = variant(dang, None)
print("dangling at zero time:", retime(q1, s.solution).makespan_ms)
q2 = variant(set(dec.dangling) - dec.bridges, None)
print("plain sinks/sources at zero:", retime(q2, s.solution).makespan_ms)
q3 = variant(dec.bridges, None)
print("bridges at zero:", retime(q3, s.solution).makespan_ms)
from placer.chain_loads import latest_cut
def zero_edges(pred):
    es = [dataclasses.replace(e, size_bytes=0) if pred(i, e) else e for i, e in enumerate(p.edges)]
    return dataclasses.replace(p, edges=es)
qa = zero_edges(lambda i, e: e.src in dang or e.dst in dang)
print("edges touching dangling at zero bytes:", retime(qa, s.solution).makespan_ms)
last = latest_cut(p, dec.cuts)
cutset = set(dec.cuts)
def jumps(i, e):
    if e.src in dang or e.dst in dang: return False
    # core edge that jumps over at least one cut: the dst's latest cut is beyond the src's next cut
    return last[e.dst] > last[e.src] + (0 if e.dst in cutset else 0) and not (e.dst in cutset and last[e.dst] == last[e.src] + 1) and last[e.dst] - last[e.src] >= 1 and e.src not in cutset and e.dst not in cutset
qb = zero_edges(jumps)
print("core edges across a cut at zero bytes:", retime(qb, s.solution).makespan_ms, sum(jumps(i, e) for i, e in enumerate(p.edges)))
qc = zero_edges(lambda i, e: True)
print("all edges zero:", retime(qc, s.solution).makespan_ms)
