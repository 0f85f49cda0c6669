"""Probe: a case's hardware with every link free (1e6 GB/s, no latency), written as case NEW:
probe_free_links.py NAME NEW; then run_case.py NEW 60 wall (../2026-11-27-bridges)."""
import json
import shutil
import sys

name, new = sys.argv[1], sys.argv[2]
hw = json.load(open(f"/tmp/q/cases/{name}.hw.json"))
for link in hw["links"]:
    link["bandwidth_gb_per_s"], link["latency_us"] = 1e6, 0.0
json.dump(hw, open(f"/tmp/q/cases/{new}.hw.json", "w"))
shutil.copy(f"/tmp/q/cases/{name}.graph.json", f"/tmp/q/cases/{new}.graph.json")
