#!/usr/bin/env bash
# Issue-20 round 43 (GPU machine): matmul hopper_v12 (v11 with b's next tile copied
# straight into shared memory, which the generator issues as asynchronous copies on
# NVIDIA: mcl.opencl.async_copy) beside v10, v11 and cuBLAS SGEMM, at 4096^3 three
# times and 2048^3 twice.
. benchmarks/runs/matmul_lib.sh
for size in 4096 2048 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v10.mcpl specialize" "examples/matmul/hopper_v11.mcpl specialize" "examples/matmul/hopper_v12.mcpl specialize"
done
