"""means.py BASE DIR...: mean gap and cases at target (1% up to 1,000 ops, 2% above) of BASE and of DIRs together."""
import glob, json, os, sys
def load(dirs):
    out = {}
    for d in dirs:
        for f in glob.glob(f"{d}/res_*_60_det.json"):
            r = json.load(open(f)); out[os.path.basename(f)[4:-12]] = (r['gap'], r['stats']['ops'])
    return out
base = load([sys.argv[1]]); new = load(sys.argv[2:])
for label, sel in (('31', lambda n: not n.startswith('unseen')), ('36 unseen', lambda n: n.startswith('unseen')), ('all', lambda n: True)):
    names = [n for n in base if sel(n) and n in new]
    tgt = lambda n, g: g[n][0] <= (0.01 if g[n][1] <= 1000 else 0.02) + 1e-12
    print(label, len(names), 'mean gap %.2f%% -> %.2f%%' % (100*sum(base[n][0] for n in names)/len(names), 100*sum(new[n][0] for n in names)/len(names)),
          'at target %d -> %d' % (sum(tgt(n, base) for n in names), sum(tgt(n, new) for n in names)))
