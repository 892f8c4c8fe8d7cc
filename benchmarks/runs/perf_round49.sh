#!/usr/bin/env bash
# Issue-20 round 49 (GPU machine): hopper_v12 with its k-step loop unrolled 4 or 8 times
# instead of completely, and with its multiply-adds columns outermost
# (matmul_hand/v11_v12_variants.py: h12_q4, h12_q8, h12_swap), beside v12 and cuBLAS SGEMM;
# 4096^3 twice, 2048^3 once.
. benchmarks/runs/matmul_lib.sh
make_hand_variants
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v12.mcpl specialize" \
    "$(hand h12_q4 $size)" "$(hand h12_q8 $size)" \
    "$(hand h12_swap $size)" --tile 128x256
done
