"""Solve the attention component of a per-head transformer (case dumped in /tmp/q/cases) one way and stitch
its copies (placer.decompose._stitch), printing each segment's span: where the stitched answer loses.

    PYTHONPATH=. python stitchprobe.py CASE SECONDS MODE   (MODE: hinted, fixed, pen, two0.5, two0.25, alt)

Mode pen needs first_solve_chain_work.diff applied (the chain_work parameter). Answers are cached in /tmp/s35.
"""
import json, sys, time, pickle
from pathlib import Path
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.budget import Budget
from placer.chain_loads import component_groups
from placer.heuristics import heft
from placer.stats import SolveStats
import placer.decompose as D
name, secs, mode = sys.argv[1], float(sys.argv[2]), sys.argv[3]
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
p = build_problem(g, h)
dec = D.decompose(p)
shape = {}
source = [shape.setdefault(D._shape(p, dec, comp), c) for c, comp in enumerate(dec.components)]
hint = heft(p).solution
c = 0
groups, touching = component_groups(p, dec.cuts, dec.segments, dec.components[c])
print("hint devices of touching", [hint.device[p.groups[x][0]] for x in touching], "cut devices in hint", sorted(set(hint.device[k] for k in dec.cuts)))
b = Budget(1e9, deterministic=True)
pk = Path(f"/tmp/s35/ans_{mode}.pkl")
if pk.exists():
    a = pickle.loads(pk.read_bytes())
else:
    if mode == "alt":
        import copy
        a0 = D._solve_component(p, dec, dec.components[c], secs / 2, b, None, fixed={x: 0 for x in touching})
        print("one device", a0.objective_ms, flush=True)
        first, last = sorted(touching, key=lambda x: min(p.groups[x]))[0], sorted(touching, key=lambda x: min(p.groups[x]))[-1]
        h2 = copy.deepcopy(a0); h2.device_of_group[last] = 4
        a = D._solve_component(p, dec, dec.components[c], secs / 2, b, h2, fixed={first: 0, last: 4})
        print("alternating", a.objective_ms, {x: a.device_of_group[x] for x in touching}, flush=True)
    elif mode.startswith("two"):
        share = float(mode[3:] or 0.5)
        a0 = D._solve_component(p, dec, dec.components[c], secs * share, b, hint, representatives=D.orbit_representatives(p))
        fx = {x: a0.device_of_group[x] for x in touching}
        print("hinted half", a0.objective_ms, "boundary", fx, flush=True)
        a = D._solve_component(p, dec, dec.components[c], secs * (1 - share), b, None, fixed=fx)
        print("fixed half", a.objective_ms, flush=True)
        if a.objective_ms > a0.objective_ms: a = a0
    elif mode == "pen":
        from collections import defaultdict
        dw = defaultdict(float)
        for k in dec.dangling: dw[p.group[k]] += p.min_time_ms(k)
        a = D._solve_component(p, dec, dec.components[c], secs, b, None, fixed={x: 0 for x in touching}, chain_work=(0, dw))
    elif mode == "fixed":
        a = D._solve_component(p, dec, dec.components[c], secs, b, None, fixed={x: 0 for x in touching})
    else:
        a = D._solve_component(p, dec, dec.components[c], secs, b, hint, representatives=D.orbit_representatives(p))
    pk.write_bytes(pickle.dumps(a))
print(mode, "component objective", a.objective_ms)
answers = [a if source[x] == x else D._copy_answer(p, dec, a, dec.components[source[x]], comp) for x, comp in enumerate(dec.components)]
stats = SolveStats()
st = D._stitch(p, dec, answers, b, 1e9, stats, False, lambda m: None, source)
s = st.schedule
cut_ms = sum(p.min_time_ms(k) for k in dec.cuts)
print("stitched", s.makespan_ms, "parts", cut_ms + sum(x.objective_ms for x in answers), "sigmas", st.sigmas[:3])
# per segment: span in stitched schedule vs component answer
for j in range(len(dec.cuts) + 1):
    entry, exit_ = dec.boundary(j)
    t0 = s.end_ms[entry] if entry is not None else 0.0
    t1 = s.start_ms[exit_] if exit_ is not None else s.makespan_ms
    if t1 - t0 > 1e-3:
        comp = dec.component_of_segment.get(j)
        print(f"segment {j} comp {comp} span {t1 - t0:.4f} ops {len(dec.segments[j])} entry dev {s.solution.device[entry] if entry is not None else None} exit dev {s.solution.device[exit_] if exit_ is not None else None}")
