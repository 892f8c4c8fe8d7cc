#!/usr/bin/env bash
# Issue-20 exploration, round 3 (GPU machine): which of matmul v8's two changes
# (128-bit tile loads, 4 x 8 lanes per warp) costs time, with the NVIDIA compiler's
# registers and PTX counts; gesummv hopper_v2 with more loads in flight.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/var; mkdir -p $V/g $V/m
sed "s|int ti = (w / 2) \* 4 + t / 8; .*|int ti = tid / 16;|; s|int tj = (w % 2) \* 8 + t % 8; .*|int tj = tid % 16;|" \
  examples/matmul/hopper_v8.mcpl > $V/m/hopper_v8_lanes2x16.mcpl
sed "s|int ti = tid / nrThreadsN;|int ti = (w / 2) * 4 + t / 8;|; s|int tj = tid % nrThreadsN;|int tj = (w % 2) * 8 + t % 8;|" \
  examples/matmul/hopper_v7.mcpl > $V/m/hopper_v7_lanes4x8.mcpl
grep -c "t / 8" $V/m/*.mcpl
timeout 200 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v5.mcpl examples/matmul/hopper_v7.mcpl \
  examples/matmul/hopper_v8.mcpl $V/m/hopper_v8_lanes2x16.mcpl $V/m/hopper_v7_lanes4x8.mcpl \
  benchmarks/opencl/matmul_hand/vec4.cl --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  "
for u in 8 12 16; do for w in 2 4 8 16; do
  sed "s/const int unroll = 4;/const int unroll = $u;/; s/const int nrWarps = 8;/const int nrWarps = $w;/; s/const int rows = 2;/const int rows = 1;/" \
    examples/gesummv/hopper_v2.mcpl > $V/g/hopper_v2r1u${u}w${w}.mcpl; done; done
timeout 200 python3 benchmarks/case_studies/run.py --kernels gesummv --versions gpu_v1 --extra "gesummv=$V/g/*.mcpl" \
  --out "$OUT/cs" --budget-s 150 2>&1 | grep -v "^  " | tail -3
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json"
