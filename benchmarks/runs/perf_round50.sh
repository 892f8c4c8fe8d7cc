#!/usr/bin/env bash
# Issue-20 round 50 (GPU machine): hopper_v10 with b's next tile copied straight into
# shared memory, as v10's feedback now proposes (benchmarks/opencl/matmul_mcpl/
# v10_direct_b.mcpl: asynchronous copies on NVIDIA), beside v10, v12 and cuBLAS SGEMM;
# 4096^3 twice, 2048^3 once.
. benchmarks/runs/matmul_lib.sh
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v10.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v10_direct_b.mcpl specialize" "examples/matmul/hopper_v12.mcpl specialize"
done
