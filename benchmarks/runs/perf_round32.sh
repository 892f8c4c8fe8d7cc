#!/usr/bin/env bash
# Round 32 (GPU machine): the gesummv split variants that led round 31 again, beside
# hopper_v2 and split_s1u8w8 (hopper_v2's kernel in the split form), 30 launches each
# (case study, median), twice.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/var32; mkdir -p $V
for c in "1 8 8" "8 2 8" "8 2 16" "4 4 8" "2 8 16" "2 4 8"; do set -- $c
  sed "s/const int split = 4;/const int split = $1;/; s/const int unroll = 2;/const int unroll = $2;/; s/const int nrWarps = 8;/const int nrWarps = $3;/" \
    benchmarks/runs/gesummv_split.mcpl > $V/split_s$1u$2w$3.mcpl; done
for run in 1 2; do
  timeout 150 python3 benchmarks/case_studies/run.py --kernels gesummv --versions hopper_v2 \
    --extra "gesummv=$V/*.mcpl" --repeats 30 --out "$OUT/cs$run" --budget-s 120 2>&1 | grep -v "^  " | tail -1
  python3 benchmarks/runs/summarise.py "$OUT/cs$run/results.json"
done
