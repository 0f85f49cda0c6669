"""The probes' inputs: a dumped case (dump_cases.py of ../2026-11-26-windows-extend) and a result's schedule."""
import json

from placer.model import Problem, build_problem
from placer.schedule import Schedule, retime, solution_from_starts
from placer.schema import GraphSpec, HardwareSpec


def problem(name: str) -> Problem:
    g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
    h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    return build_problem(g, h)


def schedule_of(p: Problem, result_path: str) -> Schedule:
    """The result's placement, in the order of its start times, re-timed."""
    r = json.load(open(result_path))
    device = [p.device_index[r["placement"][o]] for o in p.ops]
    start = {e["op"]: e["start_ms"] for e in r["schedule"]}
    return retime(p, solution_from_starts(p, device, [start[o] for o in p.ops]))
