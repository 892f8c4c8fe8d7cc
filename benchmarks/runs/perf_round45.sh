#!/usr/bin/env bash
# Issue-20 round 45 (GPU machine): the matmul case study with hopper_v12 (every version
# at 2048^3 and 4096^3, cuBLAS in the same run), merged into
# benchmarks/results/case_studies/results.json by report.py --rerun.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 400 python3 benchmarks/case_studies/run.py --kernels matmul --out "$OUT/cs" \
  --budget-s 360 2>&1 | grep -v "^  " | tail -3
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json" 2>&1 | tail -25
