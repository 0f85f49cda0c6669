"""Per benchmark case, the paired-chains bound and the best cheap bound of the last report's code
(placer/bounds.py at cb9f9ed) and of this one: the cases whose bounds move are re-run (tabulate.py).

    PYTHONPATH=. python benchmarks/reports/2026-12-12-side-ops/bound_changes.py > bound_changes.txt

Later reports name another base commit, the table whose cases are compared and the bound shown:

    ... bound_changes.py COMMIT TABLE BOUND > bound_changes.txt
"""
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from placer import bounds
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec

HERE = Path(__file__).resolve().parent
base, table_path, shown = (sys.argv[1:4] if len(sys.argv) > 3 else
                           ("cb9f9ed", HERE.parent / "2026-12-11-ancestral-loads" / "table_det.txt", "paired_chains"))
source = subprocess.run(["git", "show", f"{base}:placer/bounds.py"], capture_output=True, text=True, check=True,
                        cwd=HERE).stdout
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
    f.write(source)
spec = importlib.util.spec_from_file_location("bounds_before", f.name)
before = importlib.util.module_from_spec(spec)
sys.modules["bounds_before"] = before
spec.loader.exec_module(before)

table = Path(table_path).read_text().splitlines()
cases = [line.split()[0] for line in table[1:] if line.strip() and not line.startswith("mean")]
print(f"{'case':55s} {shown.replace('_', ' '):>23s} {'best cheap bound':>23s}")
for name in cases:
    problem = build_problem(GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text())),
                            HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text())))
    old, new = before.bound_breakdown(problem), bounds.bound_breakdown(problem)
    moved = any(abs(old[k] - new[k]) > 1e-9 for k in new)
    print(f"{name:55s} {old[shown]:10.3f} -> {new[shown]:10.3f} "
          f"{max(old.values()):10.3f} -> {max(new.values()):10.3f} {'MOVED' if moved else ''}", flush=True)
