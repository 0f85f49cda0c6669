"""Before/after table of deterministic 60 s runs: before from ../2026-12-08-fine-ticks/table_det.txt (the
GNMT msr-form rows from ../2026-12-09-refutation/table_det.txt), after from run_det.py's results in
/tmp/q/det (TAG), each answer checked by ../shared/tools/verify_result.py.

    PYTHONPATH=. python benchmarks/reports/2026-12-11-ancestral-loads/tabulate.py TAG > table_det.txt
"""
import json
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
VERIFY = HERE.parents[3] / "shared" / "tools" / "verify_result.py"
if not VERIFY.exists():
    VERIFY = HERE.parents[2] / ".." / "shared" / "tools" / "verify_result.py"


def table(path: Path) -> dict[str, list[str]]:
    rows = [line.split() for line in path.read_text().splitlines() if line.strip() and not line.startswith("case")]
    return {r[0]: r for r in rows}


before = table(HERE.parent / "2026-12-08-fine-ticks" / "table_det.txt")
before.update(table(HERE.parent / "2026-12-09-refutation" / "table_det.txt"))
tag = sys.argv[1]
print(f"{'case':55s} {'ops':>5s} {'before':>9s} {'bound':>9s} {'gap%':>6s} {'after':>9s} {'bound':>9s} {'gap%':>6s} "
      f"valid <=HEFT tight bound")
gaps = []
for result_path in sorted(Path("/tmp/q/det").glob(f"*.{tag}.json")):
    name = result_path.name[: -len(f".{tag}.json")]
    result = json.loads(result_path.read_text())
    done = subprocess.run([sys.executable, str(VERIFY), f"/tmp/q/cases/{name}.graph.json",
                           f"/tmp/q/cases/{name}.hw.json", str(result_path)], capture_output=True, text=True,
                          check=False)
    row = before.get(name)
    old = (float(row[4]), float(row[5]), float(row[6])) if row else (float("nan"),) * 3
    gap = 100 * result["gap"]
    gaps.append((old[2], gap))
    heft = result["baselines"]["heft_ms"]  # None: HEFT found no placement that fits
    target = 1.0 if int(result["stats"]["ops"]) <= 1000 else 2.0
    print(f"{name:55s} {result['stats']['ops']:5d} {old[0]:9.3f} {old[1]:9.3f} {old[2]:6.2f} "
          f"{result['makespan_ms']:9.3f} {result['lower_bound_ms']:9.3f} {gap:6.2f} "
          f"{'yes' if done.returncode == 0 else 'NO '}   "
          f"{'yes' if heft is None or result['makespan_ms'] <= heft + 1e-9 else 'NO '}    "
          f"{result['stats']['tight_bound']}"
          f"{'   > target' if gap > target else ''}")
print(f"\nmean gap over {len(gaps)} cases: {sum(a for a, _ in gaps) / len(gaps):.2f}% -> "
      f"{sum(b for _, b in gaps) / len(gaps):.2f}%")
