#!/usr/bin/env bash
# Issue-20 round 46 (GPU machine): matmul with both tiles copied asynchronously, a's
# kept in rows of k and its fragment read 2 values of k at a time
# (benchmarks/opencl/matmul_mcpl/v11_a_pairs.mcpl), and with kf = 4 (v11_a_rows), beside
# hopper_v12 and cuBLAS SGEMM; 4096^3 twice, 2048^3 once.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for size in 4096 2048 4096; do
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v12.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v11_a_pairs.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v11_a_rows.mcpl specialize" \
    --size $size --repeats 20 --out "$OUT/run$size-$RANDOM" 2>&1 | grep -v "^ *{" \
    | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -4
done
