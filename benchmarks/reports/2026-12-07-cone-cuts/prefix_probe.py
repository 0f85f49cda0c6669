"""prefix_probe.py NAME OP SECS: the earliest start of OP over ALL its ancestors (one CP-SAT cone
model, as placer.cone_bounds builds it) against the cheap head and a 60-op cone's head (placer.cone_bounds._cone)."""
import json, sys, time
from placer.bounds import Costs
from placer.budget import Budget
from placer.cone_bounds import _cone, _solve_cone
from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec

name, op, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
p = build_problem(g, h)
v = p.ops.index(op)
c = Costs.of(p)
for size in (60, 10_000):
    ops = _cone(p, v, size, False, c.head)
    t = time.perf_counter()
    got = _solve_cone(p, Budget(secs, threads=2), secs, v, ops, list(c.head), False)
    print(f"{op} head {c.head[v]:.4f} cone of {len(ops)} ops: {got:.4f} ({time.perf_counter() - t:.0f} s)", flush=True)
