"""Walk the binding chain back from the last op of a result: graph edge (with transfer) or device order."""
import json, sys, collections
r = json.load(open(sys.argv[1])); g = json.load(open(sys.argv[2]))
S = {s['op']: s for s in r['schedule']}
tr = {(t['src'], t['dst']): t for t in r['transfers']}
preds = collections.defaultdict(list)
for e in g['edges']: preds[e['dst']].append(e['src'])
bydev = collections.defaultdict(list)
for s in r['schedule']: bydev[s['device']].append(s)
prev = {}
for d, L in bydev.items():
    L.sort(key=lambda s: (s['start_ms'], s['end_ms']))
    for a, b in zip(L, L[1:]): prev[b['op']] = a['op']
k = max(S, key=lambda o: S[o]['end_ms'])
eps = 1e-6; chain = []
while True:
    s = S[k]; why = None
    for u in preds[k]:
        t = tr.get((u, k)); ready = t['end_ms'] if t else S[u]['end_ms']
        if abs(ready - s['start_ms']) < eps: why = ('edge', u, 'xfer %.3f' % (t['end_ms'] - t['start_ms']) if t else 'local'); break
    if why is None and k in prev and abs(S[prev[k]]['end_ms'] - s['start_ms']) < eps: why = ('device', prev[k], '')
    chain.append((k, s['device'], round(s['start_ms'], 3), round(s['end_ms'] - s['start_ms'], 3), why[0] if why else 'START', why[2] if why else ''))
    if why is None: break
    k = why[1]
for c in reversed(chain): print(*c)
print('edge-xfer ms on chain', round(sum(float(c[5].split()[1]) for c in chain if c[5].startswith('xfer')), 3), 'device waits', sum(1 for c in chain if c[4] == 'device'))
