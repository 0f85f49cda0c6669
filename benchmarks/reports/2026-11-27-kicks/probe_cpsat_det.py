"""CP-SAT alone on a dumped model (dump_model.py), deterministic: probe_cpsat_det.py MODEL VARIANT UNITS
(VARIANT: one = 1 worker; interN_B = N interleaved workers, batch B; lnsonlyN)."""
import sys, time
from ortools.sat.python import cp_model
path, variant, units = sys.argv[1], sys.argv[2], float(sys.argv[3])
m = cp_model.CpModel()
m.proto.parse_text_format(open(path).read())
s = cp_model.CpSolver()
p = s.parameters
p.max_deterministic_time = units
p.max_time_in_seconds = 400
p.cp_model_presolve = False
p.relative_gap_limit = 1e-4
p.random_seed = 0
if variant == "one":
    p.num_workers = 1
elif variant.startswith("inter"):
    # interN_B: N workers, batch size B
    n, b = variant[5:].split("_")
    p.num_workers = int(n); p.interleave_search = True; p.interleave_batch_size = int(b)
elif variant.startswith("lnsonly"):
    p.num_workers = int(variant[7:]); p.use_lns_only = True; p.interleave_search = True
t0 = time.perf_counter()
class CB(cp_model.CpSolverSolutionCallback):
    def on_solution_callback(self):
        print(f"  {time.perf_counter()-t0:6.1f}s obj {self.ObjectiveValue():.0f}", flush=True)
code = s.solve(m, CB())
print(variant, units, s.status_name(code), f"obj {s.objective_value:.0f} bound {s.best_objective_bound:.0f} det {s.response_proto.deterministic_time:.2f} wall {time.perf_counter()-t0:.1f}", flush=True)
