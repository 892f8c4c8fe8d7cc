#!/usr/bin/env bash
# Issue-20 round 38 (GPU machine): settings of matmul hopper_v11 beside it, v10 and
# cuBLAS SGEMM, at 4096^3 and 2048^3, twice each:
#   tall       a 256 x 128 block tile, 16 x 8 outputs per thread (a thread loads a
#              whole 16-deep row of a: stores to l_a without bank conflicts)
#   group4 / group16   other numbers of block rows walked before moving right
. benchmarks/runs/matmul_lib.sh
src=examples/matmul/hopper_v11.mcpl
with_consts $src /tmp/tall.mcpl '{"bm": 256, "bn": 128, "tm": 16, "tn": 8}'
with_consts $src /tmp/group4.mcpl '{"group": 4}'
with_consts $src /tmp/group16.mcpl '{"group": 16}'
for run in 1 2; do
  for size in 4096 2048; do
    time_variants $size "$OUT/run$run" "examples/matmul/hopper_v10.mcpl specialize" "examples/matmul/hopper_v11.mcpl specialize" \
      "/tmp/tall.mcpl specialize" "/tmp/group4.mcpl specialize" "/tmp/group16.mcpl specialize"
  done
done
# the matmul case study (every version at 2048^3 and 4096^3, cuBLAS in the same run),
# merged into benchmarks/results/case_studies/results.json by report.py --rerun
timeout 330 python3 benchmarks/case_studies/run.py --kernels matmul --out "$OUT/cs" \
  --budget-s 300 2>&1 | grep -v "^  " | tail -3
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json" 2>&1 | tail -25
