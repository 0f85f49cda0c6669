"""Real graphs the project had never seen, as cases for run_case.py: each graph on 4 NVLinked
V100-32GB and on the DGX-1, each also memory-tight (benchmarks.graphs.memory_tight).

    PYTHONPATH=. python benchmarks/reports/2026-12-04-unseen-graphs/dump_cases.py DIR

DIR holds the files as benchmarks.solvers --real-graphs expects them (pipedream/NAME/graph.txt,
msr-dnn-partitioning/{LayerGraphs,OperatorGraphs}/NAME.json); the cases go to /tmp/q/cases as
unseen-NAME_MACHINE[_tight].{graph,hw}.json."""
import json
import os
import sys
from pathlib import Path

from benchmarks import graphs
from benchmarks.solvers import _preset, import_real, real_graph_files

os.makedirs("/tmp/q/cases", exist_ok=True)
machines = {"v100x4": graphs.v100_nvlink(4), "dgx1": _preset("dgx1_v100")}
for kind, path in real_graph_files(Path(sys.argv[1])):
    doc = import_real(kind, path)
    for machine, hw in machines.items():
        for tight in (False, True):
            slug = f"unseen-{doc['name']}_{machine}{'_tight' if tight else ''}"
            json.dump(doc, open(f"/tmp/q/cases/{slug}.graph.json", "w"))
            json.dump(graphs.memory_tight(hw, doc) if tight else hw, open(f"/tmp/q/cases/{slug}.hw.json", "w"))
            print(slug, len(doc["ops"]))
