import json, glob, numpy as np
from scipy.optimize import nnls
feats = ["det", "bprop", "iprop", "branches", "conflicts", "lp", "restarts"]
X, y, case = [], [], []
for f in sorted(glob.glob("calls_*.json")):
    for c in json.load(open(f))["calls"]:
        X.append([c[k] for k in feats] + [1.0, c["nvars"]+c["ncons"]]); y.append(c["wall"]); case.append(f[6:-5])
X, y = np.array(X, float), np.array(y)
def report(cols, label):
    A = X[:, cols]
    coef, _ = nnls(A, y)
    pred = A @ coef
    print(label, dict(zip([(feats + ["const", "size"])[i] for i in cols], coef)))
    for cs in sorted(set(case)):
        m = np.array([c == cs for c in case])
        print(f"   {cs[:40]:40s} actual {y[m].sum():6.1f} pred {pred[m].sum():6.1f} ratio {y[m].sum()/pred[m].sum():5.2f}")
report([0], "det only")
report([0, 1, 2, 3, 4, 5], "counters")
report([0, 1, 2, 3, 4, 5, 7, 8], "counters+const+size")
report([1, 2], "props")
