#!/usr/bin/env bash
# Issue-20 round 44 (GPU machine): matmul hopper_v12 with asynchronous copies only where
# work lies between the copy and the barrier (its next tile, not its first), beside
# v11 (back to no asynchronous copy) and cuBLAS SGEMM, and hopper_v12 with the copy's
# inline assembly free of the "memory" clobber (matmul_hand/async_copy.py:
# h12_noclobber); 4096^3 three times, 2048^3 twice.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/async_copy.py /tmp/async > /dev/null
for size in 4096 2048 4096 2048 4096; do
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v11.mcpl specialize" "examples/matmul/hopper_v12.mcpl specialize" \
    "/tmp/async/h12_noclobber.cl local=32x8 -DMCL_n=$size -DMCL_m=$size -DMCL_p=$size" \
    --size $size --tile 128x256 --repeats 20 --out "$OUT/run$size-$RANDOM" 2>&1 \
    | grep -v "^ *{" | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' \
    -e 's/, used 1 barriers.*//' -e 's/ -DMCL_n=.*-DMCL_p=[0-9]*//' | tail -4
done
