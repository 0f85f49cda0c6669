"""A benchmark case as a Problem: /tmp/q/cases/NAME.{graph,hw}.json, made by the dump_cases.py
scripts of the 2026-11-26-windows-extend and 2026-12-04-unseen-graphs reports."""
import json

from placer.model import build_problem
from placer.schema import GraphSpec, HardwareSpec


def load(name):
    g = GraphSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.graph.json")))
    h = HardwareSpec.model_validate(json.load(open(f"/tmp/q/cases/{name}.hw.json")))
    return build_problem(g, h)
