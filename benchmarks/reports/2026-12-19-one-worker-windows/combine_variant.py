"""The table of the variant 'windows extend at 0.1% before a one-worker monolithic solve'
(windows_before_one_worker_solve.patch), assembled without running every case again: the
variant is the head's code (tag rest) where no monolithic solve followed the windows, or where
the 'every windows pass' run (tag eg) matched the head; it is that run where it had no leftover
windows (the two rules differ only there), and was run again (tag eg2) otherwise.
python combine_variant.py CASES_FILE"""
import json
import sys

rows, before_sum, after_sum = [], 0.0, 0.0
for name in open(sys.argv[1]).read().split():
    base = json.load(open(f"/tmp/q/det/{name}.rest.json"))
    every = json.load(open(f"/tmp/q/det/{name}.eg.json"))
    skipped = every["stats"].get("cpsat_skipped") == "the decomposition left too little time for the monolithic model"
    if skipped or (every["makespan_ms"], every["lower_bound_ms"]) == (base["makespan_ms"], base["lower_bound_ms"]):
        variant, source = base, "head"  # (eg identical to the head: no pass gained 0.1-1%)
    elif every["stats"].get("leftover_s") is None:
        variant, source = every, "eg"
    else:
        variant, source = json.load(open(f"/tmp/q/det/{name}.eg2.json")), "eg2"
    before_sum += base["gap"]
    after_sum += variant["gap"]
    mark = "" if abs(variant["gap"] - base["gap"]) < 1e-9 else ("better" if variant["gap"] < base["gap"] else "WORSE")
    print(f"{name:52s} {100 * base['gap']:6.2f}% -> {100 * variant['gap']:6.2f}%  ({source}) {mark}")
n = len(open(sys.argv[1]).read().split())
print(f"mean gap over {n} cases: {100 * before_sum / n:.2f}% -> {100 * after_sum / n:.2f}%")
