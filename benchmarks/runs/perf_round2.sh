#!/usr/bin/env bash
# Issue-20 exploration, round 2 (GPU machine): memory probes (driver copy and
# streaming stores at black_scholes' size), gesummv hopper_v2 over rows per warp,
# loads in flight and warps per block, matmul v5/v7/v8 (bk 8 and 16) against cuBLAS.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 120 python3 benchmarks/opencl/stream_probe.py --out "$OUT" 2>&1 | grep -v Warning | grep -v "^  " | tail -40
V=/tmp/var; mkdir -p $V/g $V/m
for r in 1 2 4; do for u in 2 4 8; do for w in 4 8; do
  sed "s/const int unroll = 4;/const int unroll = $u;/; s/const int nrWarps = 8;/const int nrWarps = $w;/; s/const int rows = 2;/const int rows = $r;/" \
    examples/gesummv/hopper_v2.mcpl > $V/g/hopper_v2r${r}u${u}w${w}.mcpl; done; done; done
sed "s/const int bk = 16;/const int bk = 8;/" examples/matmul/hopper_v8.mcpl > $V/m/hopper_v8bk8.mcpl
timeout 300 python3 benchmarks/case_studies/run.py --kernels gesummv,matmul \
  --versions gpu_v1,hopper_v5,hopper_v7,hopper_v8 --extra "gesummv=$V/g/*.mcpl" --extra "matmul=$V/m/*.mcpl" \
  --out "$OUT/cs" --budget-s 240 2>&1 | grep -v "^  " | tail -5
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json"
