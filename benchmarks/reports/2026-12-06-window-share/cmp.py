"""cmp.py BASE DIR...: each res_*_60_det.json of the DIRs against the same file in BASE (answer, gap)."""
import glob, json, os, sys
base = sys.argv[1]
for d in sys.argv[2:]:
    print('==', d)
    for f in sorted(glob.glob(f"{d}/res_*_60_det.json")):
        n = os.path.basename(f)
        r = json.load(open(f)); b = json.load(open(f"{base}/{n}"))
        tag = 'better' if r['makespan_ms'] < b['makespan_ms'] - 1e-6 else ('WORSE' if r['makespan_ms'] > b['makespan_ms'] + 1e-6 else '')
        print(f"{n[4:-12][:50]:50s} {b['makespan_ms']:9.3f} {100*b['gap']:6.2f}  ->  {r['makespan_ms']:9.3f} {100*r['gap']:6.2f} {tag}")
