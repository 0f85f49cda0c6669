#!/bin/bash
# wall-clock 60 s runs of the final code: idle, then with one competing busy process
out=/work/main/benchmarks/reports/2026-12-03-bound-search
cd /tmp
for c in inception_v3_b32_dgx1_v100 msr-bert_L-12_training_dgx1_v100; do
  RES_DIR=/tmp/q/s25/W PYTHONPATH=/work/snapF timeout 900 /work/main/.venv/bin/python /work/main/benchmarks/reports/2026-11-27-bridges/run_case.py $c 60 wall | tail -1 >> $out/runs_wall_idle.txt
  python3 /work/shared/tools/verify_result.py /tmp/q/cases/$c.graph.json /tmp/q/cases/$c.hw.json /tmp/q/s25/W/res_${c}_60_wall.json | tail -1 >> $out/runs_wall_idle.txt
done
python3 -c "while True: pass" & busy=$!
for c in inception_v3_b32_dgx1_v100_quad gpt_per_head_l16h8_b8_dgx1_v100 inception_v3_b32_dgx1_v100; do
  RES_DIR=/tmp/q/s25/W PYTHONPATH=/work/snapF timeout 900 /work/main/.venv/bin/python /work/main/benchmarks/reports/2026-11-27-bridges/run_case.py $c 60 wall | tail -1 >> $out/runs_wall_loaded.txt
  python3 /work/shared/tools/verify_result.py /tmp/q/cases/$c.graph.json /tmp/q/cases/$c.hw.json /tmp/q/s25/W/res_${c}_60_wall.json | tail -1 >> $out/runs_wall_loaded.txt
done
kill $busy
echo DONE >> $out/runs_wall_loaded.txt
