"""Whole-model CP-SAT bound with every link made free (a relaxation)."""
import json, sys, copy
from placer.schema import parse_graph, parse_hardware
from placer.model import build_problem
from placer.bounds import Costs, bound_breakdown
from placer.formulations.cpsat_model import build_cpsat
from placer import heuristics
from solvers.registry import Limits
from solvers.registry import CpSat

name, secs, variant = sys.argv[1], float(sys.argv[2]), sys.argv[3]
gd = json.load(open(f'/tmp/q/cases/{name}.graph.json'))
hd = json.load(open(f'/tmp/q/cases/{name}.hw.json'))
if variant.startswith('free'):
    for l in hd['links']:
        l['bandwidth_gb_per_s'] = 1e6; l['latency_us'] = 0.0
p = build_problem(parse_graph(gd), parse_hardware(hd))
c = Costs.of(p)
print('static', max(bound_breakdown(p).values()))
inc = heuristics.heft(p) if hasattr(heuristics, 'heft') else None
print('heft', inc.makespan_ms if inc else None)
f = build_cpsat(p, inc, 0.0, releases=(c.head, c.tail))
run, solver = CpSat().solve(f.model, Limits(time_limit_s=secs, threads=2, deterministic=True, bound_search=variant.endswith("tree")))
print(variant, run)
print('bound ms', f.lower_bound_ms(run.bound) if hasattr(run, 'bound') else None)
