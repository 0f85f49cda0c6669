#!/bin/bash
# lane.sh SNAPSHOT OUTDIR STRATJSON CASES...: deterministic 60 s runs of a code snapshot, one after
# the other, with Strategy overrides (JSON, e.g. '{"windows_share":0.7}'; '{}' for the defaults)
snap=$1; out=$2; strat=$3; shift 3; mkdir -p $out
here=$(cd "$(dirname "$0")" && pwd)
cd $snap
for c in "$@"; do STRAT="$strat" RES_DIR=$out PYTHONPATH=. .venv/bin/python $here/run_strat.py $c 60 >> $out/log.txt 2>&1; done
echo done >> $out/log.txt
