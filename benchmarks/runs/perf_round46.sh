#!/usr/bin/env bash
# Issue-20 round 46 (GPU machine): matmul with both tiles copied asynchronously, a's
# kept in rows of k and its fragment read 2 values of k at a time
# (benchmarks/opencl/matmul_mcpl/v11_a_pairs.mcpl), and with kf = 4 (v11_a_rows), beside
# hopper_v12 and cuBLAS SGEMM; 4096^3 twice, 2048^3 once.
. benchmarks/runs/matmul_lib.sh
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v12.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v11_a_pairs.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v11_a_rows.mcpl specialize"
done
