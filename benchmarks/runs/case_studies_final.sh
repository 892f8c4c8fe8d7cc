#!/usr/bin/env bash
# The case studies (benchmarks/results/REPORT.md) on the GPU machine: every version of
# every example at the paper's sizes, verified, with the references in the same run.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout ${T_CS:-420} python3 benchmarks/case_studies/run.py --out "$OUT/cs" --budget-s ${BUDGET:-300} \
  ${KERNELS:+--kernels $KERNELS} 2>&1 | grep -v "^  " | grep -v Warn | tail -20
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json" | cut -c1-150
