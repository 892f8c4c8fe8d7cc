#!/usr/bin/env bash
# Issue-20 round 42 (GPU machine): matmul hopper_v12 (both tiles copied straight from
# global to shared memory, a's kept in rows of k) as generated and with its copies made
# asynchronous by hand (benchmarks/opencl/matmul_hand/async_copy.py), beside v11 and
# v11 with b's copies asynchronous, at 4096^3 twice and 2048^3 once.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/async_copy.py /tmp/async > /dev/null
for size in 4096 4096 2048; do
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v11.mcpl specialize" "examples/matmul/hopper_v12.mcpl specialize" \
    "/tmp/async/v11_async_b.cl local=32x8 -DMCL_n=$size -DMCL_m=$size -DMCL_p=$size" \
    "/tmp/async/v12_async.cl local=32x8 -DMCL_n=$size -DMCL_m=$size -DMCL_p=$size" \
    --size $size --tile 128x256 --repeats 20 --out "$OUT/run$size" 2>&1 | grep -v "^ *{" \
    | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' \
    | sed -e 's/ -DMCL_n=.*-DMCL_p=[0-9]*//' | tail -5
done
