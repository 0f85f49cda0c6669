"""CP-SAT alone on a whole-graph model, with its search log: where does it overrun its limit?

usage: probe_first_propagation.py CASE LIMIT_S [rel] [complete] [nohint] [param:value ...]
  CASE      a case dumped by ../2026-11-26-windows-extend/dump_cases.py (/tmp/q/cases)
  rel       add every op's head and tail (placer.bounds.Costs) as redundant constraints
  complete  hint every variable (build_cpsat's complete_hint)
  nohint    no hint at all
  param:value  CP-SAT parameters (e.g. num_workers:1 cp_model_probing_level:0)
The model is the engine's for a big graph: HEFT's answer as the hint, no redundant
cumulative, no presolve, 2 workers, and a timer that calls stop_search at the limit.
"""
import json
import sys
import threading
import time

from ortools.sat.python import cp_model

from placer.bounds import Costs, lower_bound_ms
from placer.formulations.cpsat_model import build_cpsat
from placer.heuristics import heft
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec

name, limit, flags = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
costs = Costs.of(p)
f = build_cpsat(p, heft(p), lower_bound_ms(p), redundant_cumulative=False,
                releases=(costs.head, costs.tail) if "rel" in flags else None, complete_hint="complete" in flags)
if "nohint" in flags:
    f.model.clear_hints()
s = cp_model.CpSolver()
s.parameters.max_time_in_seconds = limit
s.parameters.num_workers = 2
s.parameters.cp_model_presolve = False
s.parameters.log_search_progress = True
s.parameters.log_to_stdout = False
for kv in (x for x in flags if ":" in x):
    k, v = kv.split(":")
    setattr(s.parameters, k, {"false": False, "true": True}.get(v, int(v) if v.lstrip("-").isdigit() else v))
began = time.perf_counter()
s.log_callback = lambda m: print(f"[{time.perf_counter() - began:7.2f}] {m}", flush=True)
timer = threading.Timer(limit, s.stop_search)
timer.start()
code = s.solve(f.model)
print("status", s.status_name(code), "wall", round(time.perf_counter() - began, 2), "limit", limit, flush=True)
