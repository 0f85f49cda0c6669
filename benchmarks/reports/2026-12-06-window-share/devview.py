"""devview.py RESULT: per device its busy time and idle stretches in a result."""
import json, sys, collections
r = json.load(open(sys.argv[1]))
by = collections.defaultdict(list)
for s in r['schedule']: by[s['device']].append(s)
T = r['makespan_ms']
for d in sorted(by):
    L = sorted(by[d], key=lambda s: s['start_ms'])
    busy = sum(s['end_ms'] - s['start_ms'] for s in L)
    bw = sum(s['end_ms'] - s['start_ms'] for s in L if 'grad' in s['op'] or 'bwd' in s['op'] or 'backward' in s['op'])
    # idle segments > 0.2 ms
    idle = []; t = 0
    for s in L:
        if s['start_ms'] - t > 0.2: idle.append((round(t,2), round(s['start_ms'],2)))
        t = max(t, s['end_ms'])
    if T - t > 0.2: idle.append((round(t,2), round(T,2)))
    print(d, 'busy', round(busy,2), 'bwd-ish', round(bw,2), 'n', len(L), 'idle', idle[:12])
print([s['op'] for s in r['schedule'][:5]], [s['op'] for s in r['schedule'][-5:]])
