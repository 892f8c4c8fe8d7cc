#!/usr/bin/env bash
# Round 52 (GPU machine): gesummv with each warp streaming one matrix
# (benchmarks/runs/gesummv_ab.mcpl: half the warps of a block on rows of A, half on the
# same rows of B) beside hopper_v2, whose warps stream a row of each; 30 launches each
# (case study, median), twice.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/var52; mkdir -p $V
for c in "8 8" "8 4" "16 4" "16 8" "4 8"; do set -- $c
  sed "s/const int nrWarps = 8;/const int nrWarps = $1;/; s/const int unroll = 8;/const int unroll = $2;/" \
    benchmarks/runs/gesummv_ab.mcpl > $V/ab_w$1u$2.mcpl; done
for run in 1 2; do
  timeout 200 python3 benchmarks/case_studies/run.py --kernels gesummv --versions hopper_v2 \
    --extra "gesummv=$V/*.mcpl" --repeats 30 --out "$OUT/cs$run" --budget-s 150 2>&1 | grep -v "^  " | tail -1
  python3 benchmarks/runs/summarise.py "$OUT/cs$run/results.json"
done
