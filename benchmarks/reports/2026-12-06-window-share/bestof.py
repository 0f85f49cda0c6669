"""bestof.py DIRS...: per case the best answer and bound over comma-joined run directories (one trajectory per argument)."""
import glob, json, os, sys
def load(dirs):
    out = {}
    for d in dirs.split(','):
        for f in glob.glob(f"{d}/res_*_60_det.json"):
            r = json.load(open(f)); out[os.path.basename(f)[4:-12]] = (r['makespan_ms'], r['lower_bound_ms'], r['stats']['ops'])
    return out
runs = [load(a) for a in sys.argv[1:]]
names = sorted(set.intersection(*(set(r) for r in runs)))
def gap(a, b): return (a - b) / a
for label, sel in (('31', lambda n: not n.startswith('unseen')), ('36 unseen', lambda n: n.startswith('unseen')), ('all', lambda n: True)):
    ns = [n for n in names if sel(n)]
    g0 = [gap(runs[0][n][0], runs[0][n][1]) for n in ns]
    gb = [gap(min(r[n][0] for r in runs), max(r[n][1] for r in runs)) for n in ns]
    tgt = lambda n, g: g <= (0.01 if runs[0][n][2] <= 1000 else 0.02) + 1e-12
    print(label, len(ns), 'first %.2f%% best-of %.2f%%' % (100*sum(g0)/len(ns), 100*sum(gb)/len(ns)), 'at target %d -> %d' % (sum(tgt(n, g) for n, g in zip(ns, g0)), sum(tgt(n, g) for n, g in zip(ns, gb))))
