"""Probe (twenty-seventh session, run from this folder with PYTHONPATH=the root): Every contiguous split that fits memory list-scheduled and justified, the best TOP scheduled exactly: NAME TOP."""
import sys, itertools, time

exec(open('probe_contiguous_splits_by_transfers.py').read().split('best=None')[0].replace("top=int(sys.argv[2])","top=int(sys.argv[2])"))
def devof(cuts):
    b=[0,*cuts,G]; dev_of={}
    for r in range(D):
        for g in order[b[r]:b[r+1]]: dev_of[g]=r
    return [dev_of[p.group[k]] for k in range(p.n_ops)]
t0=time.time(); scored=[]
for cc,cuts in cands:
    s=resequence(p,devof(cuts))
    if s: scored.append((justify(p,s).makespan_ms,cuts))
scored.sort(); print('reseq all', round(time.time()-t0), [ (round(a,2),c) for a,c in scored[:5]],flush=True)
for rs,cuts in scored[:top]:
    ms,lb,st=fixed_schedule(p,devof(cuts),10)
    print(cuts,'reseq',round(rs,2),'cpsat',round(ms,2),round(lb or 0,2),st,flush=True)
