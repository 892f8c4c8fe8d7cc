#!/usr/bin/env bash
# Issue-20 round 51 (GPU machine): three 8-deep stages as cuBLAS's kernel has them
# (benchmarks/opencl/matmul_mcpl/v12_three_stages.mcpl), as generated (plain copies) and
# with b's copies in asynchronous groups that stay in flight across one barrier
# (matmul_hand/async_copy.py: h3_async), beside hopper_v12 and cuBLAS SGEMM; 4096^3
# twice, 2048^3 once.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/async_copy.py /tmp/async > /dev/null
for size in 4096 2048 4096; do
  D="-DMCL_n=$size -DMCL_m=$size -DMCL_p=$size"
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v12.mcpl specialize" "/tmp/async/h3_plain.cl local=32x8 $D" \
    "/tmp/async/h3_async.cl local=32x8 $D" \
    --size $size --tile 128x256 --repeats 20 --out "$OUT/run$size-$RANDOM" 2>&1 \
    | grep -v "^ *{" | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' \
    -e 's/, used 1 barriers.*//' -e 's/ -DMCL_n=.*-DMCL_p=[0-9]*//' | tail -4
done
