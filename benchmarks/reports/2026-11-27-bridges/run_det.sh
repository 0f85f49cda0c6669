#!/bin/bash
# usage: [RES_DIR=DIR] run_det.sh TREE OUT CASE...: run_case.py deterministic 60 s per case, then verify_result.py
here=$(cd "$(dirname "$0")" && pwd)
tree=$1; out=$2; shift 2
for c in "$@"; do
  (cd $tree && PYTHONPATH=$tree timeout 900 /work/main/.venv/bin/python "$here"/run_case.py $c 60 det 2>&1 | tail -1) >> $out
  python3 /work/shared/tools/verify_result.py /tmp/q/cases/$c.graph.json /tmp/q/cases/$c.hw.json ${RES_DIR:-/tmp/q}/res_${c}_60_det.json 2>&1 | tail -1 >> $out
done
echo DONE >> $out
