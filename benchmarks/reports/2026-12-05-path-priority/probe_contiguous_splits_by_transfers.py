"""Probe (twenty-seventh session, run from this folder with PYTHONPATH=the root): Contiguous splits (groups in topological order, part r on device r) that fit memory, ranked by the transfers crossing the cuts, the cheapest TOP scheduled exactly: NAME TOP."""
import sys, itertools, time

from cases import load
from fixed_placement import fixed_schedule
from placer.heuristics import resequence, justify
name=sys.argv[1]; top=int(sys.argv[2])
p=load(name)
first={}
for k in range(p.n_ops): first.setdefault(p.group[k],k)
order=sorted(first,key=first.get); G=len(order); D=p.n_devices
pos={g:i for i,g in enumerate(order)}
mem=[p.group_memory_bytes(g) for g in order]; cap=min(p.capacity_bytes)
pre=[0]
for m in mem: pre.append(pre[-1]+m)
# cost of a cut before group-position i: sum over edges crossing it of delay
cut=[0.0]*(G+1)
for e in p.edges:
    a,b=pos[p.group[e.src]],pos[p.group[e.dst]]
    lo,hi=min(a,b),max(a,b)
    for i in range(lo+1,hi+1): cut[i]+=p.delay_ms(e,0,1)
t0=time.time(); cands=[]
for cuts in itertools.combinations(range(1,G),D-1):
    b=[0,*cuts,G]
    if all(pre[b[i+1]]-pre[b[i]]<=cap for i in range(D)):
        cands.append((sum(cut[c] for c in cuts),cuts))
cands.sort()
print('feasible',len(cands),'cheapest cut sums',[round(c,2) for c,_ in cands[:5]], round(time.time()-t0,1),flush=True)
best=None
for cc,cuts in cands[:top]:
    b=[0,*cuts,G]; dev_of={}
    for r in range(D):
        for g in order[b[r]:b[r+1]]: dev_of[g]=r
    dev=[dev_of[p.group[k]] for k in range(p.n_ops)]
    rs=justify(p,resequence(p,dev)).makespan_ms
    ms,lb,st=fixed_schedule(p,dev,10)
    print(round(cc,2),cuts,'reseq',round(rs,2),'cpsat',round(ms,2),round(lb or 0,2),st,flush=True)
