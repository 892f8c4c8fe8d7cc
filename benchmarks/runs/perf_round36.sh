#!/usr/bin/env bash
# Issue-20 round 36 (GPU machine): matmul with more outputs per thread than v10
# (a 128 x 256 block tile, 8 x 16 outputs per thread, one block per SM) beside v10
# and cuBLAS SGEMM, at 4096^3 and 2048^3, twice each: matmul_wide is hopper_v11
# with 8-deep phases and a's rows padded by 4 (run as benchmarks/runs/matmul_wide.mcpl,
# the same code), wide_bk16 is hopper_v11 (16-deep phases, a's rows unpadded: 48 kB).
. benchmarks/runs/matmul_lib.sh
src=examples/matmul/hopper_v11.mcpl
with_consts $src /tmp/matmul_wide.mcpl '{"bk": 8, "pad": 4}'
cp $src /tmp/wide_bk16.mcpl
for run in 1 2; do
  for size in 4096 2048; do
    time_variants $size "$OUT/run$run" "examples/matmul/hopper_v10.mcpl specialize" \
      "/tmp/matmul_wide.mcpl specialize" "/tmp/wide_bk16.mcpl specialize"
  done
done
