"""Every bound against the exhaustive optimum on more seeds of the bound tests' generator of
training-like paths with ops inside them (tests.test_bounds._switch_case): prints every
bound above the optimum, and counts where the switch cover is above every other bound.
Then every bound on the same seeds of the bound tests' two other generators (random
graphs; forward/backward copies).

    PYTHONPATH=. python benchmarks/reports/2026-11-26-switch-cover/validity_sweep.py 0 3000
"""
import sys

from placer.bounds import bound_breakdown
from tests.reference import brute_force_makespan
from tests.test_bounds import TOL, _mirror_case, _problem, _random_case, _switch_case


def main(lo: int, hi: int) -> None:
    n = bad = best = 0
    for seed in range(lo, hi):
        doc, hw, t = _switch_case(seed)
        optimum = brute_force_makespan(t["times"], t["edges"], t["delay"], groups=t["groups"])
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
