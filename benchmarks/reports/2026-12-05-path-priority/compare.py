"""Every res_*_60_det.json of the run directories against baseline.txt: answer, bound, gap before and
after, HEFT, and verify_result.py's verdict. compare.py [--baseline FILE] DIR... (cases in
/tmp/q/cases; the baseline beside this script unless FILE names another)."""
import glob
import json
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
args = sys.argv[1:]
baseline = os.path.join(here, "baseline.txt")
if args[:1] == ["--baseline"]:
    baseline, args = args[1], args[2:]
base = {}
for line in open(baseline):
    name, answer, bound = line.split()
    base[name] = (float(answer), float(bound))
rows = []
for d in args:
    for f in sorted(glob.glob(f"{d}/res_*_60_det.json")):
        name = os.path.basename(f)[4:-len("_60_det.json")]
        r = json.load(open(f))
        v = subprocess.run([sys.executable, "/work/shared/tools/verify_result.py", f"/tmp/q/cases/{name}.graph.json",
                            f"/tmp/q/cases/{name}.hw.json", f], capture_output=True, text=True)
        n = len(json.load(open(f"/tmp/q/cases/{name}.graph.json"))["ops"])
        heft = (r.get("baselines") or {}).get("heft_ms")
        rows.append((name, n, r["makespan_ms"], r["lower_bound_ms"], 100 * r["gap"], heft, v.returncode == 0,
                     r["stats"].get("best_from")))
print(f"{'case':52s} {'ops':>5s} {'before':>9s} {'gap%':>6s} {'after':>9s} {'bound':>9s} {'gap%':>6s} valid  answer from")
for name, n, mk, lb, gap, heft, ok, bf in sorted(rows):
    a0, b0 = base.get(name, (float("nan"), float("nan")))
    g0 = 100 * (a0 - b0) / a0
    target = 1.0 if n <= 1000 else 2.0
    change = "better" if mk < a0 - 6e-4 else ("WORSE" if mk > a0 + 6e-4 else "")  # (before: 3-4 decimals)
    print(f"{name:52s} {n:5d} {a0:9.3f} {g0:6.2f} {mk:9.3f} {lb:9.3f} {gap:6.2f} {'yes' if ok else 'NO '}  {bf}"
          f"{'  ' + change if change else ''}{'   > target' if gap > target else ''}"
          f"{'  WORSE THAN HEFT' if heft is not None and mk > heft + 1e-9 else ''}")
