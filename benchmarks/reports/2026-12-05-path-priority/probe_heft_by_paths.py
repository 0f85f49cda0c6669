"""HEFT and HEFT by paths (CPOP's priority, no forced device) on every case: probe_heft_by_paths.py NAME...
(run from this folder, PYTHONPATH=the root)."""
import sys

from cases import load
from placer.heuristics import heft, heft_by_paths

for name in sys.argv[1:]:
    p = load(name)
    a, b = heft(p), heft_by_paths(p)
    a, b = (s.makespan_ms if s else float("nan") for s in (a, b))
    print(f"{name:55s} heft {a:9.3f} heft-by-paths {b:9.3f} {'BETTER' if b < a - 1e-6 else ('worse' if b > a + 1e-6 else 'same')}")
