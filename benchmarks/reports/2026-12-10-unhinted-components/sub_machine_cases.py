"""sub_machine_cases.py NAME...: NAME-sub4 cases in /tmp/q/cases, the hardware cut to gpu0-gpu3 and the links
between what is left (a plan on them is a plan on the whole machine)."""
import json, sys, shutil
for name in sys.argv[1:]:
    h = json.load(open(f"/tmp/q/cases/{name}.hw.json"))
    keep = {"gpu0", "gpu1", "gpu2", "gpu3"}
    devs = [d for d in h["devices"] if d["id"] in keep]
    nodes = keep | {s["id"] if isinstance(s, dict) else s for s in h.get("switches", [])}
    links = [l for l in h["links"] if l["a"] in nodes and l["b"] in nodes]
    h2 = dict(h, devices=devs, links=links, name=h["name"] + "-sub4")
    json.dump(h2, open(f"/tmp/q/cases/{name}-sub4.hw.json", "w"))
    shutil.copy(f"/tmp/q/cases/{name}.graph.json", f"/tmp/q/cases/{name}-sub4.graph.json")
    print(name, len(h["devices"]), len(devs), len(h["links"]), len(links), list(h.keys()))
