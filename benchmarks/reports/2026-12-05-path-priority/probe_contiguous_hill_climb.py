"""Probe (twenty-seventh session, run from this folder with PYTHONPATH=the root): Contiguous K-block splits of the forward chain (with their gradient mates), device labels given, cut points hill-climbed with exact schedules: NAME K LABELS CUTS."""
import sys, json, time, random

from cases import load
from fixed_placement import fixed_schedule
name=sys.argv[1]; K=int(sys.argv[2]); labels=[int(x) for x in sys.argv[3].split(',')]
p=load(name)
fwd=[k for k in range(p.n_ops) if not p.ops[k].endswith('grad')]
n=len(fwd)
def devof(cuts):
    dev=[0]*p.n_ops; b=0
    for i,k in enumerate(fwd):
        while b < len(cuts) and i >= cuts[b]: b+=1
        for j in p.groups[p.group[k]]: dev[j]=labels[b]
    return dev
cache={}
def ev(cuts):
    t=tuple(cuts)
    if t not in cache:
        t0=time.time(); cache[t]=fixed_schedule(p, devof(cuts), 5)[0]
    return cache[t]
cuts=[int(x) for x in sys.argv[4].split(',')]
cur=ev(cuts); print(cuts,cur,flush=True)
for step in (16,8,4,2,1):
    improved=True
    while improved:
        improved=False
        for c in range(K-1):
            for dlt in (-step,step):
                nc=list(cuts); nc[c]+=dlt
                if not (all(0<x<n for x in nc) and all(nc[i]<nc[i+1] for i in range(K-2))): continue
                v=ev(nc)
                if v<cur-1e-9: cur,cuts=v,nc; improved=True; print(step,cuts,round(cur,3),flush=True)
print('final',cuts,cur)
