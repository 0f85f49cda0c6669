"""Solve dumped models (dump_kind.py) under CP-SAT parameter variants (one worker, deterministic
limit, each model's own presolve and LP settings): sweep_windows.py FOLDER VARIANT,... [-q]."""
import glob, json, sys, time
from ortools.sat.python import cp_model
from ortools.sat import cp_model_pb2

VARIANTS = {
    "default": {},
    "lin0": {"linearization_level": 0},
    "lin2": {"linearization_level": 2},
    "presolve": {"cp_model_presolve": True},
    "fixed_search": {"search_branching": cp_model.FIXED_SEARCH},
    "portfolio_search": {"search_branching": cp_model.PORTFOLIO_SEARCH},
    "objlb": {"use_objective_lb_search": True},
    "sym0": {"symmetry_level": 0},
    "core": {"optimize_with_core": True},
    "lbtree": {"optimize_with_lb_tree_search": True},
    "shaving": {"use_objective_shaving_search": True},
    "lin0lb": {"linearization_level": 0, "optimize_with_lb_tree_search": True},
    "lin0objlb": {"linearization_level": 0, "use_objective_lb_search": True},
    "lin0c": {"linearization_level": 0, "optimize_with_core": True},
}
folder, names = sys.argv[1], sys.argv[2].split(",")
files = sorted(glob.glob(f"{folder}/*.txt"))
for name in names:
    params = VARIANTS[name]
    tot_obj = tot_wall = tot_work = 0.0; proven = 0; rows = []
    for f in files:
        m = cp_model.CpModel()
        m.proto.parse_text_format(open(f).read())
        meta = json.load(open(f[:-4] + ".json")); limit = meta["limit"]
        s = cp_model.CpSolver()
        s.parameters.num_workers = 1
        s.parameters.max_deterministic_time = limit
        s.parameters.max_time_in_seconds = 60
        s.parameters.cp_model_presolve = meta.get("presolve", False)
        if not meta.get("lin", True): s.parameters.linearization_level = 0
        for k, v in params.items():
            setattr(s.parameters, k, v)
        t = time.perf_counter()
        st = s.solve(m)
        w = time.perf_counter() - t
        obj = s.objective_value if st in (cp_model.OPTIMAL, cp_model.FEASIBLE) else float("nan")
        if "-q" not in sys.argv: print("   ", f.split("/")[-1], name, f"obj {obj:.0f} bound {s.best_objective_bound:.0f} opt {st == cp_model.OPTIMAL} work {s.response_proto.deterministic_time:.2f} wall {w:.1f}", flush=True)
        rows.append((f.split("/")[-1], obj, st == cp_model.OPTIMAL, w, s.response_proto.deterministic_time, s.best_objective_bound))
        tot_wall += w; tot_work += s.response_proto.deterministic_time; proven += st == cp_model.OPTIMAL
    json.dump(rows, open(f"{folder}/sweep_{name}.json", "w"))
    print(f"{folder.split('/')[-1]:45s} {name:16s} proven {proven}/{len(files)} wall {tot_wall:7.1f} work {tot_work:7.2f}", flush=True)
