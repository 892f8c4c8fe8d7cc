#!/usr/bin/env bash
# Issue-20 round 50 (GPU machine): hopper_v10 with b's next tile copied straight into
# shared memory, as v10's feedback now proposes (benchmarks/opencl/matmul_mcpl/
# v10_direct_b.mcpl: asynchronous copies on NVIDIA), beside v10, v12 and cuBLAS SGEMM;
# 4096^3 twice, 2048^3 once.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for size in 4096 2048 4096; do
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v10.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v10_direct_b.mcpl specialize" \
    "examples/matmul/hopper_v12.mcpl specialize" \
    --size $size --repeats 20 --out "$OUT/run$size-$RANDOM" 2>&1 | grep -v "^ *{" \
    | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -4
done
