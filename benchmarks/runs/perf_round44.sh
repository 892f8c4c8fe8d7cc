#!/usr/bin/env bash
# Issue-20 round 44 (GPU machine): matmul hopper_v12 with asynchronous copies only where
# work lies between the copy and the barrier (its next tile, not its first), beside
# v11 (back to no asynchronous copy) and cuBLAS SGEMM, and hopper_v12 with the copy's
# inline assembly free of the "memory" clobber (matmul_hand/v11_v12_variants.py:
# h12_noclobber); 4096^3 three times, 2048^3 twice.
. benchmarks/runs/matmul_lib.sh
make_hand_variants
for size in 4096 2048 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v11.mcpl specialize" "examples/matmul/hopper_v12.mcpl specialize" \
    "$(hand h12_noclobber $size)" --tile 128x256
done
