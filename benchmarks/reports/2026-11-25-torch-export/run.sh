#!/usr/bin/env bash
# The PyTorch path on the README's example, on this machine's CPU (2 cores, shared):
# profile every op, plan one device and four, export, and measure the placed step.
# Run from the repository root: nice -n 10 bash benchmarks/reports/2026-11-25-torch-export/run.sh
set -euo pipefail
out=benchmarks/reports/2026-11-25-torch-export
src=examples/torch/branchy_cnn.py:build
placer=.venv/bin/placer
$placer import torch $src --training --profile --repeat 5 --hardware dgx1_v100 -o $out/cnn_profiled.json 2> $out/profile.txt
$placer solve $out/cnn_profiled.json --hardware dgx1_v100_quad --solver single_device -o $out/one_device.json -q > $out/one_device.txt
$placer solve $out/cnn_profiled.json --hardware dgx1_v100_quad --time-limit 10 --deterministic -o $out/four_gpus.json -q > $out/four_gpus.txt
$placer export torch $src $out/four_gpus.json -o $out/placed_cnn.py
$placer measure $src $out/one_device.json --steps 10 -o $out/measure_one_device.json > $out/measure_one_device.txt
$placer measure $src $out/four_gpus.json --steps 10 -o $out/measure_four_gpus.json > $out/measure_four_gpus.txt
