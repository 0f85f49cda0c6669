"""Dump the CP-SAT models one kind of sub-solve makes in a deterministic 60 s run, with their
limits: dump_kind.py CASE FUNCTION (the caller of Budget.solve_cpsat: _solve_window,
_solve_component, _solve_cone). Models go to $DUMP_DIR (default /tmp/q/s24)/FUNCTION_CASE/NNN.txt
(text format), each with NNN.json: its limit, presolve and LP settings (sweep_windows.py uses them)."""
import json, os, sys, traceback
import placer.budget as B
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name = sys.argv[1]
KIND = sys.argv[2]; out = f"{os.environ.get('DUMP_DIR', '/tmp/q/s24')}/{KIND}_{name}"
os.makedirs(out, exist_ok=True)
count = [0]
orig = B.Budget.solve_cpsat
def wrapped(self, model, seconds, **kw):
    caller = traceback.extract_stack()[-2].name
    if caller == KIND and count[0] < 120:
        limits = self._limits(seconds, threads=self.threads, **kw)
        model.export_to_file(f"{out}/{count[0]:03d}.txt")
        json.dump({"limit": limits.time_limit_s, "presolve": limits.presolve, "lin": limits.linear_relaxation}, open(f"{out}/{count[0]:03d}.json", "w"))
        count[0] += 1
    return orig(self, model, seconds, **kw)
B.Budget.solve_cpsat = wrapped
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
print(name, r.makespan_ms, count[0])
