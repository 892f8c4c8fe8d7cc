#!/usr/bin/env bash
# Issue-20 round 43 (GPU machine): matmul hopper_v12 (v11 with b's next tile copied
# straight into shared memory, which the generator issues as asynchronous copies on
# NVIDIA: mcl.opencl.async_copy) beside v10, v11 and cuBLAS SGEMM, at 4096^3 three
# times and 2048^3 twice.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for size in 4096 2048 4096 2048 4096; do
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v10.mcpl specialize" "examples/matmul/hopper_v11.mcpl specialize" \
    "examples/matmul/hopper_v12.mcpl specialize" \
    --size $size --repeats 20 --out "$OUT/run$size-$RANDOM" 2>&1 | grep -v "^ *{" \
    | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -4
done
