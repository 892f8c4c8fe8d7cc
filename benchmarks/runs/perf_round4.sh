#!/usr/bin/env bash
# Issue-20 exploration, round 4 (GPU machine): matmul v8 under register limits that
# keep 2 blocks per SM; gesummv hopper_v2 with 16-32 runs in flight per lane.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/var4; mkdir -p $V/g $V/m
sed "s/const int bk = 16;/const int bk = 8;/" examples/matmul/hopper_v8.mcpl > $V/m/hopper_v8bk8.mcpl
timeout 200 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl \
  "examples/matmul/hopper_v8.mcpl -cl-nv-maxrregcount=128" "examples/matmul/hopper_v8.mcpl -cl-nv-maxrregcount=120" \
  "$V/m/hopper_v8bk8.mcpl -cl-nv-maxrregcount=128" "examples/matmul/hopper_v7.mcpl -cl-nv-maxrregcount=128" \
  --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-100
timeout 100 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl \
  "examples/matmul/hopper_v8.mcpl -cl-nv-maxrregcount=128" --size 2048 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-100
for u in 16 24 32; do for w in 1 2 4; do
  sed "s/const int unroll = 4;/const int unroll = $u;/; s/const int nrWarps = 8;/const int nrWarps = $w;/; s/const int rows = 2;/const int rows = 1;/" \
    examples/gesummv/hopper_v2.mcpl > $V/g/hopper_v2r1u${u}w${w}.mcpl; done; done
timeout 200 python3 benchmarks/case_studies/run.py --kernels gesummv --versions gpu_v1 --extra "gesummv=$V/g/*.mcpl" \
  --out "$OUT/cs" --budget-s 150 2>&1 | grep -v "^  " | tail -3
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json"
