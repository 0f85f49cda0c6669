import json, sys
from placer.schema import parse_graph, parse_hardware
from placer.model import build_problem
from placer.decompose import decompose, _forced_moves_ms
for n in open('/tmp/q/s24/cases31.txt').read().split() + [l.split()[0] for l in open('/tmp/q/s26/unseen_runs/runs.txt')]:
    p=build_problem(parse_graph(json.load(open(f'/tmp/q/cases/{n}.graph.json'))), parse_hardware(json.load(open(f'/tmp/q/cases/{n}.hw.json'))))
    if not p.memory_exceeds_a_device(): continue
    dec=decompose(p)
    print(n, None if dec is None else round(_forced_moves_ms(p,dec),4))
