"""The deterministic 60 s answers and bounds before this change, from the reports that measured them last
(run from benchmarks/reports): python baseline.py > ../2026-12-05-path-priority/baseline.txt."""
import re
base={}
def det(f):
    for l in open(f):
        m=re.match(r'(\S+) 60\.0 (\S+) bound (\S+) gap (\S+)%',l)
        if m: base[m.group(1)]=(float(m.group(2)),float(m.group(3)))
det('2026-12-02-windows-without-lp/runs_det_windows_and_cones.txt')
det('2026-12-03-bound-search/runs_det_dgx1_and_quad.txt')
for f in ('2026-12-04-unseen-graphs/table_det.txt','2026-12-04-unseen-graphs/table_det_after.txt'):
    for l in open(f):
        p=l.split()
        if p and p[0].startswith('unseen-'): base[p[0]]=(float(p[2]),float(p[3]))
for k,(a,b) in sorted(base.items()): print(k,a,b)
