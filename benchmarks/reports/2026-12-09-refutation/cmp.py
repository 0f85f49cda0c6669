import glob, json, os, sys
base = {os.path.basename(f): json.load(open(f)) for f in glob.glob(sys.argv[1] + '/res_*')}
b_=w_=s_=0
for d in sys.argv[2:]:
    for f in sorted(glob.glob(d + '/res_*')):
        r = json.load(open(f)); b = base[os.path.basename(f)]
        same = abs(r['makespan_ms']-b['makespan_ms'])<=1e-6*b['makespan_ms'] and abs(r['lower_bound_ms']-b['lower_bound_ms'])<=1e-6*b['lower_bound_ms']
        if not same:
            print(f"{os.path.basename(f)[4:-12]:55s} ans {b['makespan_ms']:10.4f} -> {r['makespan_ms']:10.4f} lb {b['lower_bound_ms']:10.4f} -> {r['lower_bound_ms']:10.4f} gap {100*b['gap']:6.2f} -> {100*r['gap']:6.2f}")
            if r['gap']<b['gap']-1e-9: b_+=1
            elif r['gap']>b['gap']+1e-9: w_+=1
        else: s_+=1
print('better',b_,'worse',w_,'same',s_)
