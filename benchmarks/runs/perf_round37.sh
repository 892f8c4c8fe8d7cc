#!/usr/bin/env bash
# Issue-20 round 37 (GPU machine): matmul with 8 x 16 outputs per thread
# (examples/matmul/hopper_v11.mcpl and the const settings below) beside v10 and
# cuBLAS SGEMM, at 4096^3 and 2048^3, twice each:
#   wide_bk16  hopper_v11: 128 x 256 block tile, 256 threads, 16-deep phases
#   w128_tn16  128 x 128 block tile, 128 threads (8 x 16 each), 2 blocks per SM
#   w128_tm16  the same with 16 x 8 outputs per thread
#   v10same    hopper_v11 at v10's settings (v10's code but for the a tile's load)
. benchmarks/runs/matmul_lib.sh
src=examples/matmul/hopper_v11.mcpl
cp $src /tmp/wide_bk16.mcpl
with_consts $src /tmp/w128_tn16.mcpl '{"bn": 128, "pad": 4}'
with_consts $src /tmp/w128_tm16.mcpl '{"bn": 128, "tm": 16, "tn": 8, "pad": 4}'
with_consts $src /tmp/v10same.mcpl '{"bn": 128, "tn": 8, "pad": 4}'
for run in 1 2; do
  for size in 4096 2048; do
    time_variants $size "$OUT/run$run" "examples/matmul/hopper_v10.mcpl specialize" \
      "/tmp/wide_bk16.mcpl specialize" "/tmp/w128_tn16.mcpl specialize" \
      "/tmp/w128_tm16.mcpl specialize" "/tmp/v10same.mcpl specialize"
  done
done
