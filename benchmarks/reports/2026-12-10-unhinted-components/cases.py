"""The benchmark cases the probes of this report read (/tmp/q/cases/NAME.{graph,hw}.json, written by
../2026-11-26-windows-extend/dump_cases.py and ../2026-12-04-unseen-graphs/dump_cases.py)."""
import json

from placer.budget import Budget
from placer.decompose import Decomposition, decompose, orbit_representatives
from placer.model import Problem, build_problem
from placer.schema import GraphSpec, HardwareSpec

CASES = "/tmp/q/cases"


def graph_document(name: str) -> dict:
    return json.load(open(f"{CASES}/{name}.graph.json"))


def problem(name: str, graph: dict | None = None) -> Problem:
    """Case `name` (its graph document replaced by `graph` when given)."""
    return build_problem(GraphSpec.model_validate(graph or graph_document(name)),
                         HardwareSpec.model_validate(json.load(open(f"{CASES}/{name}.hw.json"))))


def decomposed(name: str) -> tuple[Problem, Decomposition, list[int], Budget]:
    """Case `name`, its series decomposition, its devices' orbit representatives and a
    deterministic one-worker budget for component solves (as the engine runs them)."""
    p = problem(name)
    return p, decompose(p), orbit_representatives(p), Budget(1000, deterministic=True, threads=1)
