#!/usr/bin/env bash
# Issue-20 round 49 (GPU machine): hopper_v12 with its k-step loop unrolled 4 or 8 times
# instead of completely, and with its multiply-adds columns outermost
# (matmul_hand/async_copy.py: h12_q4, h12_q8, h12_swap), beside v12 and cuBLAS SGEMM;
# 4096^3 twice, 2048^3 once.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/async_copy.py /tmp/async > /dev/null
for size in 4096 2048 4096; do
  D="-DMCL_n=$size -DMCL_m=$size -DMCL_p=$size"
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v12.mcpl specialize" "/tmp/async/h12_q4.cl local=32x8 $D" \
    "/tmp/async/h12_q8.cl local=32x8 $D" "/tmp/async/h12_swap.cl local=32x8 $D" \
    --size $size --tile 128x256 --repeats 20 --out "$OUT/run$size-$RANDOM" 2>&1 \
    | grep -v "^ *{" | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' \
    -e 's/, used 1 barriers.*//' -e 's/ -DMCL_n=.*-DMCL_p=[0-9]*//' | tail -5
done
