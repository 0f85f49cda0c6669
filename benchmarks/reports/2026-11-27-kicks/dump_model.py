"""run a case det 60 s, dumping the whole-graph CP-SAT model (the engine's _solve_cpsat) to /tmp/q/model_NAME.pb.txt: dump_model.py NAME"""
import json, sys
import placer.budget as B
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
name = sys.argv[1]
orig = B.Budget.solve_cpsat
def patched(self, model, seconds, **kw):
    import traceback
    if any(f.name == "_solve_cpsat" for f in traceback.extract_stack()):
        model.export_to_file(f"/tmp/q/model_{name}.pb.txt")
        print("dumped", len(model.proto.variables), "vars, limit", seconds, kw, flush=True)
    return orig(self, model, seconds, **kw)
B.Budget.solve_cpsat = patched
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
r = place(g, h, PlaceOptions(time_limit_s=60, deterministic=True))
print(r.makespan_ms, r.lower_bound_ms)
