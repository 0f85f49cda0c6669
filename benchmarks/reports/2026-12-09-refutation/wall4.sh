#!/bin/bash
# wall4.sh SNAPSHOT OUTDIR [loaded]: four cases, wall clock 60 s, one after another (with
# `loaded`: beside one busy process)
snap=$1; out=$2; mkdir -p $out; here=$(cd "$(dirname "$0")" && pwd); cd $snap
if [ "$3" = loaded ]; then (python3 -c "while True: pass" & echo $! > $out/busy.pid); fi
for c in gnmt_b32-msr-form_v100x4_nvlink gnmt_b32-msr-form_dgx1_v100 inception_v3_b32_dgx1_v100_quad inception_v3_b32-separated_v100x4_nvlink; do
  uptime >> $out/load.txt
  RES_DIR=$out PYTHONPATH=. .venv/bin/python $here/../2026-12-07-cone-cuts/run_strat.py $c 60 wall >> $out/log.txt 2>&1
done
[ -f $out/busy.pid ] && kill $(cat $out/busy.pid)
echo done >> $out/log.txt
