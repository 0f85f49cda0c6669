"""Probe (twenty-seventh session, run from this folder with PYTHONPATH=the root): The blocks of a paired-chains answer placed on devices by the given labels, then scheduled exactly: NAME CUTS LABELS...."""
import sys, itertools

from cases import load
from fixed_placement import fixed_schedule
from placer import bounds as B
name=sys.argv[1]; cuts=[int(x) for x in sys.argv[2].split(',')]
p=load(name); c=B.Costs.of(p)
mate=B._heaviest_mates(p,c)
merged=[c.fastest[k]+(c.fastest[mate[k]] if mate[k]>=0 else 0) for k in range(p.n_ops)]
path=B.longest_path(p,merged)
gpos={}
for i,k in enumerate(path): gpos.setdefault(p.group[k],i)
# every group: block of the nearest path position (by topological index)
order=sorted(range(p.n_ops))
def block_of(i):
    b=0
    while b<len(cuts) and i>=cuts[b]: b+=1
    return b
grp_block={}
for g,i in gpos.items(): grp_block[g]=block_of(i)
# groups not on path: attach to block of the path op preceding in topological order
pathset=sorted(gpos.items(), key=lambda t:p.groups[t[0]][0])
for g in range(len(p.groups)):
    if g in grp_block: continue
    first=min(p.groups[g]); prev=[gg for gg,i in gpos.items() if min(p.groups[gg])<first]
    grp_block[g]=grp_block[max(prev,key=lambda gg:min(p.groups[gg]))] if prev else 0
for pat in sys.argv[3:]:
    labels=[int(x) for x in pat.split(',')]
    dev=[labels[grp_block[p.group[k]]] for k in range(p.n_ops)]
    print(pat, [round(x,2) if isinstance(x,float) else x for x in fixed_schedule(p,dev,20)], flush=True)
