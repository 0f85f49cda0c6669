#!/bin/bash
# wall10.sh OUTDIR [loaded]: the ten representative cases, wall clock 60 s, one after another
out=$1; mkdir -p $out; cd /work/snap30
if [ "$2" = loaded ]; then (python3 -c "while True: pass" & echo $! > $out/busy.pid); fi
for c in inception_v3_b32_dgx1_v100_quad inception_v3_b32-separated_v100x4_nvlink nasnet_cells_8x3_s0_b32_v100x4_nvlink bert_per_head_l12_b32_v100x4_nvlink unet_d6x9_b8_dgx1_v100 gnmt_b32-msr-form_v100x4_nvlink pipedream-nasnetalarge_dgx1_v100 msr-inceptionv3_training_v100x4_nvlink unseen-pipedream-resnet50_dgx1_tight unseen-msr-bert24_training_dgx1_tight; do
  uptime >> $out/load.txt
  RES_DIR=$out PYTHONPATH=. .venv/bin/python /work/main/benchmarks/reports/2026-12-07-cone-cuts/run_strat.py $c 60 wall >> $out/log.txt 2>&1
done
[ -f $out/busy.pid ] && kill $(cat $out/busy.pid)
echo done >> $out/log.txt
