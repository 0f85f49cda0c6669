"""A result's placement scheduled by the list schedulers (HEFT's order re-timed, justified,
resequenced, upward-rank list schedule, 1,000 randomized priorities, other rank rules).

Usage: PYTHONPATH=. python probe_list_schedules_of_a_placement.py NAME RESULT.json"""
import json, sys
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
import placer.heuristics as H
from placer.schedule import retime, solution_from_starts
name, res = sys.argv[1], sys.argv[2]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
r = json.load(open(res)); idx = {d.id: i for i, d in enumerate(h.devices)}
dev = [idx[r['placement'][op]] for op in p.ops]
hs = H.heft(p); up = H.upward_rank(p)
rt = retime(p, solution_from_starts(p, dev, hs.start_ms))
print("best placement: result", r['makespan_ms'], "retimed in HEFT order", rt.makespan_ms, "justified", H.justify(p, rt).makespan_ms,
      "reseq", H.resequence(p, dev).makespan_ms, "list", H._list_schedule(p, up, {y: dev[p.groups[y][0]] for y in range(len(p.groups))}).makespan_ms)
import random, time
rng = random.Random(0)
forced = {y: dev[p.groups[y][0]] for y in range(len(p.groups))}
for noise in (0.1, 0.3, 1.0):
    best = 1e9; t = time.perf_counter()
    for i in range(1000):
        s = H._list_schedule(p, [u * (1 + noise * rng.random()) for u in up], forced)
        best = min(best, s.makespan_ms)
    print("noise", noise, "best of 1000 list schedules", round(best, 3), "justified", round(best, 3), f"{time.perf_counter()-t:.1f}s")
# also rank variants: downward, up+down, forward-first
dn = H._downward_rank(p)
for label, pr in (("up+down", [a + b for a, b in zip(up, dn)]), ("-down", [-b for b in dn]), ("up-down", [a - b for a, b in zip(up, dn)])):
    s = H._list_schedule(p, pr, forced)
    print(label, round(s.makespan_ms, 3), "justified", round(H.justify(p, s).makespan_ms, 3))
