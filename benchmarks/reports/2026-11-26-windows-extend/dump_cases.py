"""Write the benchmark's hard, real and zoo cases as JSON files to /tmp/q/cases (for run_det.py)."""
import json
import os
import re

from benchmarks.solvers import build_cases

os.makedirs("/tmp/q/cases", exist_ok=True)
for c in build_cases(False, ["hard", "real", "zoo"]):
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "_", c.name + ("_tight" if c.memory_tight else ""))
    json.dump(c.graph, open(f"/tmp/q/cases/{slug}.graph.json", "w"))
    json.dump(c.hardware, open(f"/tmp/q/cases/{slug}.hw.json", "w"))
    print(slug, len(c.graph["ops"]), c.tags, c.modes)
