"""Record every CP-SAT call of a deterministic run: wall, cpu, det time, search counters, size, caller."""
import json, sys, time, traceback, resource
import solvers.cpsat as C
from placer.engine import PlaceOptions, place
from placer.schema import GraphSpec, HardwareSpec
calls = []
orig = C.solve_cpsat
def wrapped(model, *a, **kw):
    t = time.perf_counter(); c = time.thread_time()
    run, solver = orig(model, *a, **kw)
    p = solver.response_proto
    caller = [f.name for f in traceback.extract_stack()[-6:-1]]
    calls.append(dict(wall=time.perf_counter() - t, thread_cpu=time.thread_time() - c, user=p.user_time, det=p.deterministic_time,
                      conflicts=p.num_conflicts, branches=p.num_branches, bprop=p.num_binary_propagations,
                      iprop=p.num_integer_propagations, lp=p.num_lp_iterations, restarts=p.num_restarts,
                      nbool=p.num_booleans, nvars=len(model.proto.variables), ncons=len(model.proto.constraints),
                      presolve=kw.get("presolve", True), lin=kw.get("linear_relaxation", True), caller="/".join(caller)))
    return run, solver
C.solve_cpsat = wrapped
import solvers.registry as R
for k, v in list(vars(R).items()):
    pass
name = sys.argv[1]
g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
t = time.perf_counter(); c = time.process_time()
r = place(g, h, PlaceOptions(time_limit_s=float(sys.argv[2]), deterministic=True))
total = time.perf_counter() - t
print(name, f"{r.makespan_ms:.4f} gap {100*r.gap:.2f}% wall {total:.0f} cpu {time.process_time()-c:.0f} calls {len(calls)}")
json.dump(dict(total=total, cpu=time.process_time()-c, calls=calls), open(f"/tmp/q/s25/calls_{name}.json", "w"))
