"""Probe (twenty-seventh session, run from this folder with PYTHONPATH=the root): The paired-chains dynamic programme without merging, with its block structure traced back: NAME TARGET."""
import sys

from cases import load
from placer import bounds as B
import numpy as np
name=sys.argv[1]; target=float(sys.argv[2])
p=load(name); c=B.Costs.of(p)
mate=B._heaviest_mates(p,c)
merged=[c.fastest[k]+(c.fastest[mate[k]] if mate[k]>=0 else 0) for k in range(p.n_ops)]
path=B.longest_path(p,merged); pr=B._Pair.of(p,c,path,mate)
n=len(pr.head_a); wa,wb=pr.work_a,pr.work_b
rest_a,rest_b=wa[-1]+pr.tail_a, wb[-1]+pr.tail_b
# front[end] = list of (xa,xb,prev_end,prev_idx)
fronts={0:[(None,None,None,None)]}
def pareto(pts):
    pts=sorted(pts,key=lambda t:(t[0],t[1])); out=[]; best=np.inf
    for q in pts:
        if q[1]<best-1e-12: out.append(q); best=q[1]
    return out
fronts={}
for end in range(1,n+1):
    cand=[]
    for s in range(0,end):
        if not pr.feasible[s,end-1]: continue
        src=[(0.0,0.0,-1,-1)] if s==0 else fronts.get(s,[])
        for idx,(xa0,xb0,_,_) in enumerate(src):
            a=max(xa0+pr.delay_a[s],pr.head_a[s]) if s>0 else pr.head_a[0]
            b=max(xb0+pr.delay_b[s],pr.head_b[s]) if s>0 else pr.head_b[0]
            ba,bb=wa[end]-wa[s],wb[end]-wb[s]
            both=max(a+ba+bb,b+bb) if a<=b else max(b+ba+bb,a+ba)
            for xa,xb in ((a+ba,max(both,b+bb)),(max(both,a+ba),b+bb)):
                if max(xa+rest_a-wa[end], xb+rest_b-wb[end])<target:
                    cand.append((xa,xb,s,idx))
    fronts[end]=pareto(cand)
    if end%20==0: print(end,len(fronts[end]),flush=True)
best=min(fronts[n],key=lambda q:max(q[0]+pr.tail_a,q[1]+pr.tail_b))
print('bound',max(best[0]+pr.tail_a,best[1]+pr.tail_b))
cuts=[]; e=n; q=best
while e>0:
    cuts.append(e); s,idx=q[2],q[3]
    if s<=0: break
    q=fronts[s][idx]; e=s
cuts=sorted(cuts)
print('blocks',len(cuts),cuts)
print('block work A',[round(wa[b]-wa[a],1) for a,b in zip([0]+cuts,cuts)])
print('block work B',[round(wb[b]-wb[a],1) for a,b in zip([0]+cuts,cuts)])
