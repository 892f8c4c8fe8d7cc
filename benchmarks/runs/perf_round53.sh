#!/usr/bin/env bash
# Issue-20 round 53 (GPU machine): hopper_v12 with its multiply-adds in serpentine order
# (benchmarks/opencl/matmul_mcpl/v12_serpentine.mcpl) beside v12 and cuBLAS SGEMM;
# 4096^3 twice, 2048^3 once.
. benchmarks/runs/matmul_lib.sh
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v12.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v12_serpentine.mcpl specialize"
done
