#!/usr/bin/env bash
# Issue-20 round 42 (GPU machine): matmul_mcpl/v11_a_rows.mcpl (both tiles copied straight
# from global to shared memory, a's kept in rows of k; hopper_v12 when this ran) as
# generated and with its copies asynchronous (benchmarks/opencl/matmul_hand/
# v11_v12_variants.py: a_rows_async, then v12_async), beside v11 and v11 with b's copies
# asynchronous, at 4096^3 twice and 2048^3 once.
. benchmarks/runs/matmul_lib.sh
make_hand_variants
for size in 4096 4096 2048; do
  time_variants $size "$OUT/run$size" "examples/matmul/hopper_v11.mcpl specialize" \
    "benchmarks/opencl/matmul_mcpl/v11_a_rows.mcpl specialize" \
    "$(hand v11_async_b $size)" "$(hand a_rows_async $size)" \
    --tile 128x256
done
