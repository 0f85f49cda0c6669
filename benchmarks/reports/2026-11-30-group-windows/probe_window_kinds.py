"""winkinds.py NAME RESULT SECS KIND[,KIND] [initial_ops]: window search from a result with only some kinds"""
import json, sys
exec(open('benchmarks/reports/2026-11-30-group-windows/probe_window_steps.py').read().split("cur = ws._Incumbent")[0])
from placer.window_search import WindowOptions
secs = float(sys.argv[3]); kinds = tuple(sys.argv[4].split(","))
ws.KINDS = kinds
opts = WindowOptions(initial_ops=int(sys.argv[5]) if len(sys.argv) > 5 else 60, patience=1.0)
best = [inc]
def offer(s, src):
    best[0] = s; return s
B = Budget(secs + 10, deterministic=True)
counts = ws.improve_by_windows(p, inc, B, secs, 0, offer, lambda s: False, opts)
print(name, kinds, "from", round(inc.makespan_ms, 4), "to", round(best[0].makespan_ms, 4), counts)
