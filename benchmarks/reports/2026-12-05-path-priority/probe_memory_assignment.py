"""Probe (twenty-seventh session, run from this folder with PYTHONPATH=the root): A memory-feasible group assignment minimising the sum of transfers (CP-SAT), then scheduled exactly: NAME [SECONDS]."""
import sys, time

from cases import load
from fixed_placement import fixed_schedule
from ortools.sat.python import cp_model
name=sys.argv[1]; secs=float(sys.argv[2]) if len(sys.argv)>2 else 10
p=load(name); D=p.n_devices; G=len(p.groups)
m=cp_model.CpModel()
on=[[m.new_bool_var(f'o{g}_{d}') for d in range(D)] for g in range(G)]
for g in range(G): m.add_exactly_one(on[g])
for d in range(D):
    if p.capacity_bytes[d] is not None:
        m.add(sum(p.group_memory_bytes(g)*on[g][d] for g in range(G)) <= p.capacity_bytes[d])
# symmetry: first group on device 0
m.add(on[0][0]==1)
cost=[]
unit=1e-3
pairs={}
for e in p.edges:
    gu,gv=p.group[e.src],p.group[e.dst]
    if gu==gv: continue
    key=(min(gu,gv),max(gu,gv))
    pairs[key]=pairs.get(key,0)+p.delay_ms(e,0,1)
for (a,b),ms in pairs.items():
    x=m.new_bool_var('')
    for d in range(D): m.add_bool_or([on[a][d].Not(), on[b][d], x])
    cost.append(int(ms/unit)*x)
m.minimize(sum(cost))
s=cp_model.CpSolver(); s.parameters.max_time_in_seconds=secs; s.parameters.num_workers=2
t=time.time(); st=s.solve(m)
print('master',s.status_name(st), s.objective_value*unit, s.best_objective_bound*unit, round(time.time()-t,1),flush=True)
grp_dev=[next(d for d in range(D) if s.value(on[g][d])) for g in range(G)]
dev=[grp_dev[p.group[k]] for k in range(p.n_ops)]
print(fixed_schedule(p,dev,20))
