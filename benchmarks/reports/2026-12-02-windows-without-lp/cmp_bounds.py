import json, sys
folder = sys.argv[1]
a = json.load(open(f"{folder}/sweep_default.json")); b = json.load(open(f"{folder}/sweep_lin0.json"))
hi = sum(y[5] > x[5] + 1e-9 for x, y in zip(a, b)); lo = sum(y[5] < x[5] - 1e-9 for x, y in zip(a, b))
print("lin0 bound higher", hi, "lower", lo, "of", len(a), "proven", sum(x[2] for x in a), sum(y[2] for y in b),
      "wall", round(sum(x[3] for x in a), 1), round(sum(y[3] for y in b), 1),
      "mean bound ratio", sum(y[5] / max(x[5], 1e-9) for x, y in zip(a, b)) / len(a))
