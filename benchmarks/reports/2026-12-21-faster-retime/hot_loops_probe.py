"""Time the searches' hot loops on one case and fingerprint their answers, for comparing two checkouts.

    PYTHONPATH=TREE python benchmarks/reports/2026-12-21-faster-retime/hot_loops_probe.py CASE [REPS]

Takes the HEFT schedule of /tmp/q/cases/CASE.{graph,hw}.json and makes REPS variants (default
200) with a fixed seed: 5% of the ops moved to another allowed device, starts jittered. Times
(best of three passes) solution_from_starts + retime on each, as every search loop does, and
resequence (two list schedules) on a tenth of them, as the stitch does. Prints ms per call and
a hash of all start and end times and transfers, which must be equal between the two checkouts."""
import hashlib
import json
import random
import sys
import time
from pathlib import Path

from placer.heuristics import heft, resequence
from placer.model import build_problem
from placer.schedule import retime, solution_from_starts
from placer.schema import GraphSpec, HardwareSpec

name = sys.argv[1]
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
g = GraphSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.graph.json").read_text()))
h = HardwareSpec.model_validate(json.loads(Path(f"/tmp/q/cases/{name}.hw.json").read_text()))
problem = build_problem(g, h)
base = heft(problem)
rng = random.Random(7)
variants = []
for _ in range(reps):
    device = [d if rng.random() > 0.05 else rng.choice(problem.allowed[problem.group[k]])
              for k, d in enumerate(base.solution.device)]
    for grp in problem.groups:  # a group stays on one device
        for k in grp:
            device[k] = device[grp[0]]
    variants.append((device, [s + rng.uniform(-0.2, 0.2) for s in base.start_ms]))
best = float("inf")
for _ in range(3):
    began = time.perf_counter()
    schedules = [retime(problem, solution_from_starts(problem, d, s)) for d, s in variants]
    best = min(best, (time.perf_counter() - began) / reps * 1e3)
best_reseq = float("inf")
for _ in range(3):
    began = time.perf_counter()
    resequenced = [resequence(problem, d) for d, _ in variants[::10]]
    best_reseq = min(best_reseq, (time.perf_counter() - began) / len(resequenced) * 1e3)
digest = hashlib.sha256()
for sch in schedules + [s for s in resequenced if s is not None]:
    digest.update(repr((sch.start_ms, sch.end_ms, [(t.edge, t.route, t.start_ms, t.end_ms) for t in sch.transfers]))
                  .encode())
print(f"{name} ops {problem.n_ops} edges {len(problem.edges)}: {best:.3f} ms per re-timing, "
      f"{best_reseq:.2f} ms per resequence, answers {digest.hexdigest()[:16]}")
