"""Every res_*_60_det.json of a run directory: answer, bound, gap, HEFT, and verify_result.py's verdict."""
import json, glob, subprocess, sys, os
rows = []
d = sys.argv[1]
for f in sorted(glob.glob(f'{d}/res_*_60_det.json')):
    name = os.path.basename(f)[4:-12]
    r = json.load(open(f))
    v = subprocess.run([sys.executable, '/work/shared/tools/verify_result.py', f'/tmp/q/cases/{name}.graph.json',
                        f'/tmp/q/cases/{name}.hw.json', f], capture_output=True, text=True)
    ok = v.returncode == 0
    n = len(json.load(open(f'/tmp/q/cases/{name}.graph.json'))['ops'])
    heft = (r.get('baselines') or {}).get('heft_ms')
    rows.append((name, n, r['status'], r['makespan_ms'], r['lower_bound_ms'], 100 * r['gap'], heft, ok, r['stats'].get('tight_bound'), r['stats'].get('best_from')))
print(f"{'case':48s} {'ops':>5s} {'answer':>9s} {'bound':>9s} {'gap%':>6s} {'HEFT':>9s} valid  tight bound / answer from")
for name, n, st, mk, lb, gap, heft, ok, tb, bf in rows:
    target = 1.0 if n <= 1000 else 2.0
    print(f"{name:48s} {n:5d} {mk:9.3f} {lb:9.3f} {gap:6.2f} {(heft if heft is not None else float('nan')):9.3f} {'yes' if ok else 'NO '}  {tb} / {bf}{'' if gap <= target else '   > target'}{'  WORSE THAN HEFT' if heft is not None and mk > heft + 1e-9 else ''}")
