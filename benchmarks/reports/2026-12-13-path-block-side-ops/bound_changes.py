"""Per benchmark case, the path-blocks bound and the best cheap bound of the last report's code
(placer/bounds.py at e2edbdb) and of this one: the cases whose bounds move are re-run (tabulate.py).

    PYTHONPATH=. python benchmarks/reports/2026-12-13-path-block-side-ops/bound_changes.py > bound_changes.txt
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
source = subprocess.run(["git", "show", "e2edbdb:placer/bounds.py"], capture_output=True, text=True, check=True,
                        cwd=HERE).stdout
with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
    f.write(source)
spec = importlib.util.spec_from_file_location("bounds_before", f.name)
before = importlib.util.module_from_spec(spec)
sys.modules["bounds_before"] = before
spec.loader.exec_module(before)

table = (HERE.parent / "2026-12-12-side-ops" / "table_det.txt").read_text().splitlines()
cases = [line.split()[0] for line in table[1:] if line.strip() and not line.startswith("mean")]
print(f"{'case':55s} {'path blocks':>23s} {'best cheap bound':>23s}")
for name in cases:
    problem = build_problem(GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text())),
                            HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text())))
    old, new = before.bound_breakdown(problem), bounds.bound_breakdown(problem)
    moved = any(abs(old[k] - new[k]) > 1e-9 for k in new)
    print(f"{name:55s} {old['path_blocks']:10.3f} -> {new['path_blocks']:10.3f} "
          f"{max(old.values()):10.3f} -> {max(new.values()):10.3f} {'MOVED' if moved else ''}", flush=True)
