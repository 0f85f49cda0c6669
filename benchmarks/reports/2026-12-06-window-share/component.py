"""The part of a case's graph (JSON) reachable from one op, or the rest: what the probes keep."""
import collections
import json


def part(name: str, first: str, reachable: bool) -> dict:
    """Case NAME's graph (/tmp/q/cases) with only the ops reachable from `first` (or, with
    `reachable` False, only the others) and the edges between them."""
    gj = json.load(open(f"/tmp/q/cases/{name}.graph.json"))
    succ = collections.defaultdict(list)
    for e in gj['edges']:
        succ[e['src']].append(e['dst'])
    seen, stack = set(), [first]
    while stack:
        k = stack.pop()
        if k not in seen:
            seen.add(k)
            stack += succ[k]
    keep = {o['id'] for o in gj['ops'] if (o['id'] in seen) == reachable}
    gj['ops'] = [o for o in gj['ops'] if o['id'] in keep]
    gj['edges'] = [e for e in gj['edges'] if e['src'] in keep and e['dst'] in keep]
    return gj
