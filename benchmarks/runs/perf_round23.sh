#!/usr/bin/env bash
# Issue-20 round 23 (GPU machine): `.maxnreg 128` (matmul_variants.py maxnreg=N) on
# hopper_v10 as generated and on its hand variants (v10_variants.py), and on the
# hopper_v10 settings that took more than 128 registers (bk = 8: 130; a unpadded),
# each beside itself uncapped, at 4096^3 against cuBLAS in the same run.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/v10v; python3 benchmarks/opencl/matmul_hand/v10_variants.py $V > /dev/null
M=/tmp/v10m; mkdir -p $M
sed "s/const int bk = 16; /const int bk = 8;  /" examples/matmul/hopper_v10.mcpl > $M/hopper_v10_bk8.mcpl
sed "s/const int pad = 4;/const int pad = 0;/" examples/matmul/hopper_v10.mcpl > $M/hopper_v10_pad0.mcpl
files=()
for f in examples/matmul/hopper_v10.mcpl $M/hopper_v10_bk8.mcpl $M/hopper_v10_pad0.mcpl; do
  files+=("$f specialize" "$f specialize maxnreg=128"); done
for f in $V/h_*.cl; do
  l=local=32x8; case $f in *wg16x16*) l=local=16x16;; esac
  files+=("$f $l" "$f $l maxnreg=128"); done
timeout 500 python3 benchmarks/opencl/matmul_variants.py "${files[@]}" \
  --size 4096 --repeats 20 --out "$OUT" 2>&1 | grep -v "^ *{" | cut -c1-120
