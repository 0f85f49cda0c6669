"""Every bound against the exhaustive optimum on small training-like paths built for the
switch cover: a forward chain and its backward chain joined into one path (groups
{f_i, b_i}, some backward ops in a group of their own), plus one or two side ops, each in
a path group, running from a path op to a later one (the ops a device may have to run
inside the path). Prints every bound above the optimum, and counts where the switch cover
is the largest bound and above every other one.

    PYTHONPATH=. python benchmarks/reports/2026-11-26-switch-cover/validity_sweep.py 0 3000
"""
import random
import sys

from placer.bounds import bound_breakdown
from tests.conftest import fully_connected
from tests.reference import brute_force_makespan
from tests.test_bounds import TOL, _mirror_case, _problem, _random_case


def case(seed: int) -> tuple[dict, dict, list, list, list, int]:
    rng = random.Random(seed)
    m = rng.choice([2, 2, 3])
    k = rng.randint(2, 3)
    names = [f"f{i}" for i in range(k)] + [f"b{i}" for i in reversed(range(k))]
    times = [float(rng.randint(0, 4)) for _ in names]
    edges = [(i, i + 1, rng.choice([0, 1, 2, 3]) * 1_000_000) for i in range(2 * k - 1)]
    groups = [[i, 2 * k - 1 - i] for i in range(k)]
    if rng.random() < 0.3:  # a backward op in a group of its own
        g = rng.randrange(k)
        groups[g].remove(2 * k - 1 - g)
        groups.append([2 * k - 1 - g])
    order = list(range(2 * k))
    for _ in range(rng.choice([1, 1, 2])):
        g = rng.randrange(len(groups))
        src = rng.randrange(0, 2 * k - 2)
        dst = rng.randrange(src + 2, 2 * k)
        names.append(f"s{len(names)}")
        times.append(float(rng.randint(1, 4)))
        side = len(names) - 1
        edges += [(src, side, rng.choice([0, 1, 2]) * 1_000_000), (side, dst, rng.choice([0, 1, 2]) * 1_000_000)]
        groups[g].append(side)
        order.insert(order.index(src) + 1, side)  # the graph's op order stays topological
    group_of = {x: gi for gi, gs in enumerate(groups) for x in gs}
    ops = [{"id": names[x], "time_ms": times[x], "group": f"g{group_of[x]}"} for x in order]
    doc = {"format": "placer.graph/v1", "name": f"cover-{seed}", "ops": ops,
           "edges": [{"src": names[u], "dst": names[v], "bytes": b} for u, v, b in edges]}
    return doc, fully_connected(m), times, edges, groups, m


def main(lo: int, hi: int) -> None:
    n = bad = best = 0
    for seed in range(lo, hi):
        doc, hw, times, edges, groups, m = case(seed)
        optimum = brute_force_makespan([[t] * m for t in times], edges, lambda s, a, b: s / 1e6,
                                       groups=[g for g in groups if len(g) > 1])
        if optimum is None:
            continue
        b = bound_breakdown(_problem(doc, hw))
        n += 1
        for name, value in b.items():
            if value > optimum + TOL:
                bad += 1
                print("INVALID", seed, name, value, optimum, flush=True)
        others = max(v for k, v in b.items() if k != "switch_cover")
        if b["switch_cover"] > others + 1e-6:
            best += 1
            print("COVER BEST", seed, round(b["switch_cover"], 6), round(others, 6), optimum, flush=True)
    print("cases", n, "invalid", bad, "switch cover above every other bound", best)
    for maker in (_random_case, _mirror_case):
        n = bad = 0
        for seed in range(lo, hi):
            g, hw, t = maker(seed)
            optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], t["memory"], t["capacity"], t["groups"])
            if optimum is None:
                continue
            n += 1
            for name, value in bound_breakdown(_problem(g, hw)).items():
                if value > optimum + TOL:
                    bad += 1
                    print("INVALID", maker.__name__, seed, name, value, optimum, flush=True)
        print(maker.__name__, "cases", n, "invalid", bad)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
