#!/usr/bin/env bash
# Issue-20 round 39 (GPU machine): matmul v11_warp_patch (v11 with each warp on a 4 x 8
# patch of the thread grid) beside v11 and cuBLAS SGEMM, at 4096^3 and 2048^3, three
# times each, with other warp patches of the same code:
#   wn4   a warp on 8 x 4 threads     wn2   on 16 x 2     wn16  on 2 x 16 (v11's patch)
. benchmarks/runs/matmul_lib.sh
src=benchmarks/opencl/matmul_mcpl/v11_warp_patch.mcpl
for wn in 4 2 16; do with_consts $src /tmp/wn$wn.mcpl "{\"wn\": $wn}"; done
for run in 1 2 3; do
  for size in 4096 2048; do
    time_variants $size "$OUT/run$run" "examples/matmul/hopper_v11.mcpl specialize" \
      "$src specialize" "/tmp/wn4.mcpl specialize" "/tmp/wn2.mcpl specialize" \
      "/tmp/wn16.mcpl specialize" --tile 128x256
  done
done
