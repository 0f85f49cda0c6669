"""Prototype: heads (tails) raised by all ancestors (descendants) in one group on one machine."""
import json, sys, time, math
from collections import defaultdict
from placer.schema import GraphSpec, HardwareSpec
from placer.model import build_problem
from placer.bounds import Costs, bound_breakdown, head_tail_bounds_ms, _one_machine_ms, _preemptive_one_machine_ms
def anc_sets(p, reverse):
    n = p.n_ops; anc = [0] * n
    order = range(n - 1, -1, -1) if reverse else range(n)
    for v in order:
        a = 0
        for i in (p.succs[v] if reverse else p.preds[v]):
            u = p.edges[i].dst if reverse else p.edges[i].src
            a |= anc[u] | (1 << u)
        anc[v] = a
    return anc
def raiser(p, c, reverse):
    anc = anc_sets(p, reverse)
    def raise_at(v, release):
        a = anc[v]; byg = defaultdict(list)
        while a:
            low = a & -a; u = low.bit_length() - 1; a ^= low
            byg[p.group[u]].append(u)
        best = 0.0
        for g, us in byg.items():
            if len(us) < 2: continue
            best = max(best, _one_machine_ms([(release[u], c.fastest[u]) for u in us]))
        return best
    return raise_at
for name in sys.argv[1:]:
    g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
    h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    p = build_problem(g, h); c = Costs.of(p)
    t = time.time()
    before = head_tail_bounds_ms(p, c)
    c2 = c.raised(p, raiser(p, c, False)); c2 = c2.raised(p, raiser(p, c2, True), tails=True)
    after = head_tail_bounds_ms(p, c2)
    print('%-55s %5d' % (name, p.n_ops), ' '.join('%s %.3f->%.3f' % (k[:5], before[k], after[k]) for k in before), '%.1fs' % (time.time() - t), flush=True)
