#!/usr/bin/env bash
# Issue-20 round 51 (GPU machine): three 8-deep stages as cuBLAS's kernel has them
# (benchmarks/opencl/matmul_mcpl/v12_three_stages.mcpl), as generated (plain copies) and
# with b's copies in asynchronous groups that stay in flight across one barrier
# (matmul_hand/v11_v12_variants.py: h3_async), beside hopper_v12 and cuBLAS SGEMM; 4096^3
# twice, 2048^3 once.
. benchmarks/runs/matmul_lib.sh
make_hand_variants
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v12.mcpl specialize" \
    "$(hand h3_plain $size)" "$(hand h3_async $size)" --tile 128x256
done
