import json, glob, collections
rows = []
for f in sorted(glob.glob("calls_*.json")):
    d = json.load(open(f)); name = f[6:-5]
    cs = d["calls"]
    w = sum(c["wall"] for c in cs); det = sum(c["det"] for c in cs)
    print(f"{name[:40]:40s} total {d['total']:6.1f} cpsat wall {w:6.1f} det {det:6.2f} s/unit {w/det:5.2f} outside {d['total']-w:5.1f}")
    agg = collections.defaultdict(lambda: collections.Counter())
    for c in cs:
        k = c["caller"].split("/")[-2] if "solve_cpsat" in c["caller"].split("/")[-1] else c["caller"].split("/")[-1]
        a = agg[k]; a["n"] += 1
        for x in ("wall", "det", "conflicts", "branches", "bprop", "iprop", "lp", "nvars", "ncons"):
            a[x] += c[x]
    for k, a in sorted(agg.items(), key=lambda x: -x[1]["wall"]):
        print(f"   {k:28s} n {a['n']:4d} wall {a['wall']:6.1f} s/unit {a['wall']/max(a['det'],1e-9):5.2f} "
              f"us/bprop {1e6*a['wall']/max(a['bprop'],1):6.3f} us/iprop {1e6*a['wall']/max(a['iprop'],1):6.3f} us/branch {1e6*a['wall']/max(a['branches'],1):7.1f} size {(a['nvars']+a['ncons'])/a['n']:7.0f}")
