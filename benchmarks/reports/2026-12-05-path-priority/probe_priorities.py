"""The two list-scheduling priorities on the final placements of earlier deterministic runs:
by tails (the rule before) and by the path through each op (head plus tail), each then
double-justified. probe_priorities.py RESULT.json... (run from this folder, PYTHONPATH=the root)."""
import json
import os
import sys

from cases import load
from placer.heuristics import _heads, _list_schedule, _tails, justify

for path in sys.argv[1:]:
    name = os.path.basename(path)[4:].rsplit("_", 2)[0]  # res_NAME_SECS_MODE.json
    p, r = load(name), json.load(open(path))
    dev = [p.device_index[r["placement"][p.ops[k]]] for k in range(p.n_ops)]
    t = lambda k: p.time_ms[k][dev[k]]  # noqa: E731
    dl = lambda e: p.delay_ms(e, dev[e.src], dev[e.dst])  # noqa: E731
    tail = _tails(p, t, dl)
    path_rank = [h + q for h, q in zip(_heads(p, t, dl), tail)]
    forced = {p.group[k]: dev[k] for k in range(p.n_ops)}
    a = justify(p, _list_schedule(p, tail, forced)).makespan_ms
    b = justify(p, _list_schedule(p, path_rank, forced)).makespan_ms
    verdict = "BETTER" if b < a - 1e-6 else ("worse" if b > a + 1e-6 else "same")
    print(f"{name:55s} {p.n_ops:5d} answer {r['makespan_ms']:9.3f} tails {a:9.3f} paths {b:9.3f} {verdict}")
