"""Where a result loses time: loads, critical path compute and switches: probe_anatomy.py NAME RESULT."""
import json, sys
from cases import problem, schedule_of
from placer.schedule import retime, solution_from_starts
from placer.neighbourhood import critical_path
name, res = sys.argv[1], sys.argv[2]
p = problem(name)
s = schedule_of(p, res)
dev = s.solution.device
print("makespan", s.makespan_ms)
load = [0.0]*p.n_devices
for k in range(p.n_ops): load[dev[k]] += p.time_ms[k][dev[k]]
print("loads", [round(x,2) for x in load], "avg", sum(load)/len(load))
path = critical_path(p, s)
comp = sum(p.time_ms[k][dev[k]] for k in path)
print("path ops", len(path), "compute on path", round(comp,3), "rest", round(s.makespan_ms-comp,3))
# transitions
trans = []
for a, b in zip(path, path[1:]):
    edge = any(p.edges[i].dst == b for i in p.succs[a])
    trans.append(("E" if edge else "D") + ("x" if dev[a]!=dev[b] else ""))
from collections import Counter
print(Counter(trans))
# idle per device
for d in range(p.n_devices):
    ops = sorted((s.start_ms[k], s.end_ms[k]) for k in range(p.n_ops) if dev[k]==d)
    print(d, "busy", round(load[d],2), "idle before end", round(s.makespan_ms - load[d],2), "last end", round(max(e for _,e in ops),2))
