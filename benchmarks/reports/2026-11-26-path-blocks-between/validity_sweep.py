"""The path-blocks bound against the exhaustive optimum on more seeds of the bound tests' two generators:
PYTHONPATH=. python benchmarks/reports/2026-11-26-path-blocks-between/validity_sweep.py 160 1200"""
import sys
from tests.test_bounds import _random_case, _mirror_case, _problem, TOL
from tests.reference import brute_force_makespan
from placer.bounds import bound_breakdown
bad = 0; n = 0; tight = 0
lo, hi = int(sys.argv[1]), int(sys.argv[2])
for maker in (_random_case, _mirror_case):
    for seed in range(lo, hi):
        g, hw, t = maker(seed)
        opt = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
        if opt is None: continue
        b = bound_breakdown(_problem(g, hw)); n += 1
        if b["path_blocks"] > opt + TOL:
            bad += 1; print("INVALID", maker.__name__, seed, b["path_blocks"], opt)
        tight += abs(b["path_blocks"] - opt) < 1e-6
print("cases", n, "invalid", bad, "path_blocks tight", tight)
