"""Before/after table of deterministic 60 s runs: before from ../2026-12-11-ancestral-loads/table_det.txt,
after from run_det.py's results in /tmp/q/det (TAG) for the cases whose bounds the change moves
(`bound_changes.py` lists them; the others start from identical bounds and are not re-run), each
answer checked by ../shared/tools/verify_result.py.

    PYTHONPATH=. python benchmarks/reports/2026-12-12-side-ops/tabulate.py TAG > table_det.txt

Later reports name the table they start from (its rows re-run or marked "identical bounds"):

    ... tabulate.py TAG BEFORE_TABLE > table_det.txt
"""
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERIFY = HERE.parents[3] / "shared" / "tools" / "verify_result.py"
if not VERIFY.exists():
    VERIFY = HERE.parents[2] / ".." / "shared" / "tools" / "verify_result.py"

before_table = Path(sys.argv[2]) if len(sys.argv) > 2 else HERE.parent / "2026-12-11-ancestral-loads" / "table_det.txt"
rows = [line.split() for line in before_table.read_text().splitlines()
        if line.strip() and not line.startswith(("case", "mean"))]
# a row's answer: its re-run ("after") columns, else those of the run before it
rows = [row[:2] + (row[2:5] if row[5] == "(identical" else row[5:8]) for row in rows]
tag = sys.argv[1]
print(f"{'case':55s} {'ops':>5s} {'before':>9s} {'bound':>9s} {'gap%':>6s} {'after':>9s} {'bound':>9s} {'gap%':>6s} "
      f"valid <=HEFT tight bound")
gaps = []
for row in rows:
    name, ops = row[0], int(row[1])
    old = float(row[2]), float(row[3]), float(row[4])
    result_path = Path(f"/tmp/q/det/{name}.{tag}.json")
    if not result_path.exists():  # bounds unchanged: the run is the one before
        gaps.append((old[2], old[2]))
        print(f"{name:55s} {ops:5d} {old[0]:9.3f} {old[1]:9.3f} {old[2]:6.2f}   (identical bounds, not re-run)")
        continue
    result = json.loads(result_path.read_text())
    done = subprocess.run([sys.executable, str(VERIFY), f"/tmp/q/cases/{name}.graph.json",
                           f"/tmp/q/cases/{name}.hw.json", str(result_path)], capture_output=True, text=True,
                          check=False)
    gap = 100 * result["gap"]
    gaps.append((old[2], gap))
    heft = result["baselines"]["heft_ms"]
    target = 1.0 if ops <= 1000 else 2.0
    print(f"{name:55s} {ops:5d} {old[0]:9.3f} {old[1]:9.3f} {old[2]:6.2f} {result['makespan_ms']:9.3f} "
          f"{result['lower_bound_ms']:9.3f} {gap:6.2f} {'yes' if done.returncode == 0 else 'NO':5s} "
          f"{'yes' if heft is None or result['makespan_ms'] <= heft + 1e-9 else 'NO':6s} "
          f"{result['stats']['tight_bound']}{'   > target' if gap > target else ''}")
print(f"\nmean gap over {len(gaps)} cases: {sum(g[0] for g in gaps) / len(gaps):.2f}% -> "
      f"{sum(g[1] for g in gaps) / len(gaps):.2f}%")
