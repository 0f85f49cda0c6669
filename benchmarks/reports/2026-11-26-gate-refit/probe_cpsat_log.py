"""CP-SAT alone on the engine's model, hinted by HEFT, with its search log.

Usage (cases from benchmarks/reports/2026-11-26-windows-extend/dump_cases.py):
  PYTHONPATH=. python probe_cpsat_log.py gnmt_b32-msr-form_v100x4_nvlink 60 WORKERS
Env: AT=N approximate ticks; NOHINT=1 no hint; DS=1 a lowest-start decision strategy;
PARAMS="name=value;..." CP-SAT parameters."""
import json, sys
from ortools.sat.python import cp_model
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.heuristics import heft
import placer.formulations.cpsat_model as CM
import os
if os.environ.get("AT"): CM._APPROX_TICKS = int(os.environ["AT"])
from placer.formulations.cpsat_model import build_cpsat
name, secs = sys.argv[1], float(sys.argv[2])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
hs = heft(p)
print("heft", hs.makespan_ms)
f = build_cpsat(p, hs, 27.4)
print(f.stats if hasattr(f, 'stats') else '')
s = cp_model.CpSolver()
s.parameters.max_time_in_seconds = secs
s.parameters.num_workers = int(sys.argv[3]) if len(sys.argv) > 3 else 2
s.parameters.log_search_progress = True
if os.environ.get("NOHINT"): f.model.clear_hints()
if os.environ.get("DS"):
    f.model.add_decision_strategy(f.start, cp_model.CHOOSE_LOWEST_MIN, cp_model.SELECT_MIN_VALUE)
if os.environ.get("PARAMS"):
    for kv in os.environ["PARAMS"].split(";"):
        k, v = kv.split("="); setattr(s.parameters, k, eval(v))
code = s.solve(f.model)
print(s.status_name(code), s.objective_value, s.best_objective_bound, f.tick_ms if hasattr(f,'tick_ms') else '')
