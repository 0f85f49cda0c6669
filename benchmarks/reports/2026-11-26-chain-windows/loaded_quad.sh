#!/bin/bash
# usage (from the repository root): loaded_quad.sh BUSY N OUT
# N wall-clock 60 s solves of the zoo's Inception-V3 on the DGX-1 quad, each beside BUSY busy
# processes (python spinning); the last line of each run is appended to OUT. Needs the case
# files in /tmp/q/cases (benchmarks/reports/2026-11-26-windows-extend/dump_cases.py) and
# benchmarks/reports/2026-11-26-chain-windows/probe_long_wall.py (a place() call printing progress, as in the traces here).
busy=$1; n=$2; out=$3
for i in $(seq 1 $n); do
  pids=""
  for b in $(seq 1 $busy); do python3 -c "while True: pass" & pids="$pids $!"; done
  PYTHONPATH=. timeout 300 .venv/bin/python benchmarks/reports/2026-11-26-chain-windows/probe_long_wall.py inception_v3_b32_dgx1_v100_quad 60 > /tmp/q/lq_${busy}_$i.txt 2>&1
  kill $pids
  echo "busy=$busy run $i: $(tail -1 /tmp/q/lq_${busy}_$i.txt)" >> $out
  sleep 2
done
