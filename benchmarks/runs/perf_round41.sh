#!/usr/bin/env bash
# Issue-20 round 41 (GPU machine): matmul hopper_v11 with its next k-tile copied from
# global to shared memory asynchronously (PTX cp.async, benchmarks/opencl/matmul_hand/
# v11_v12_variants.py) beside v11 as generated, at 4096^3 twice; then where the warps of v11
# and of cuBLAS's kernel stall (Nsight Compute, stall reasons per issued instruction).
. benchmarks/runs/matmul_lib.sh
make_hand_variants
for run in 1 2; do
  time_variants 4096 "$OUT/run$run" "examples/matmul/hopper_v11.mcpl specialize" \
    "$(hand v11_base 4096)" "$(hand v11_async_b 4096)" "$(hand v11_async_ab 4096)" \
    --tile 128x256
done
ncu_stalls "$OUT" hopper_v11
