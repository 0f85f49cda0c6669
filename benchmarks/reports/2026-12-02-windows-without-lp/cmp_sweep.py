import glob, json, sys, math
folder = sys.argv[1]
res = {f.split("sweep_")[1][:-5]: json.load(open(f)) for f in glob.glob(f"{folder}/sweep_*.json")}
names = sorted(res)
n = len(res[names[0]])
best = [min(res[v][i][1] for v in names if not math.isnan(res[v][i][1])) for i in range(n)]
base = res["default"]
for v in names:
    r = res[v]
    rel = sum((r[i][1] / best[i] - 1) if not math.isnan(r[i][1]) and best[i] > 0 else 0 for i in range(n)) / n
    better = sum(r[i][1] < base[i][1] - 1e-9 for i in range(n)); worse = sum(r[i][1] > base[i][1] + 1e-9 for i in range(n))
    nan = sum(math.isnan(r[i][1]) for i in range(n))
    print(f"{v:16s} proven {sum(x[2] for x in r):3d}/{n} mean excess {100*rel:.3f}% vs default better {better} worse {worse} none {nan} wall {sum(x[3] for x in r):6.1f} work {sum(x[4] for x in r):6.2f}")
