"""One case, deterministic or wall clock, with its progress: run_case.py NAME SECS [det|wall] [SEED].
The result goes to $RES_DIR (default /tmp/q) as res_NAME_SECS_MODE[_sSEED].json."""
import json, os, sys, time
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name, secs = sys.argv[1], float(sys.argv[2])
det = len(sys.argv) > 3 and sys.argv[3] == "det"
seed = int(sys.argv[4]) if len(sys.argv) > 4 else None
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
def cb(pr):
    if pr.heartbeat: return
    print(f"{pr.elapsed_s:7.1f} {pr.phase:14s} inc {pr.incumbent_ms} bound {pr.bound_ms} {pr.message[:120]}", flush=True)
t = time.perf_counter()
r = place(g, h, PlaceOptions(time_limit_s=secs, deterministic=det, seed=seed or 0), progress=cb)
print(name, secs, f"{r.makespan_ms:.4f} bound {r.lower_bound_ms:.4f} gap {100*r.gap:.2f}% from {r.stats.best_from} tight {r.stats.tight_bound} wall {time.perf_counter()-t:.0f}", flush=True)
json.dump(r.model_dump(mode="json"), open(f"{os.environ.get('RES_DIR', '/tmp/q')}/res_{name}_{int(secs)}_{'det' if det else 'wall'}{'' if seed is None else f'_s{seed}'}.json", "w"))
