"""What the probes share: a benchmark case (from benchmarks/reports/2026-11-26-windows-extend/
dump_cases.py, in /tmp/q/cases) and an engine result on it, as the problem and the result's
schedule re-timed. Run the probes from the repository root with PYTHONPATH=. and this folder."""
import json

from placer.model import Problem, build_problem
from placer.schedule import Schedule, Solution, retime
from placer.schema import load_json, parse_graph, parse_hardware


def case_and_incumbent(name: str, result_path: str) -> tuple[Problem, Schedule, dict]:
    case = f"/tmp/q/cases/{name}"
    p = build_problem(parse_graph(load_json(case + ".graph.json")), parse_hardware(load_json(case + ".hw.json")))
    result = json.load(open(result_path))
    op_index = {o: k for k, o in enumerate(p.ops)}
    device_index = {d: i for i, d in enumerate(p.devices)}
    device, start = [0] * p.n_ops, [0.0] * p.n_ops
    for s in result["schedule"]:
        device[op_index[s["op"]]] = device_index[s["device"]]
        start[op_index[s["op"]]] = s["start_ms"]
    order = [sorted((k for k in range(p.n_ops) if device[k] == d), key=lambda k: (start[k], k))
             for d in range(p.n_devices)]
    return p, retime(p, Solution(device=device, order=order)), result
