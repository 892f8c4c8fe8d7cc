#!/usr/bin/env bash
# Issue-20 round 25 (GPU machine): hopper_v10 over bk x pad, each specialised with
# and without `.maxnreg 128` (matmul_variants.py maxnreg=N), at 4096^3 and 2048^3
# against cuBLAS in the same run: which setting the register limit makes the best.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
M=/tmp/v10s; mkdir -p $M
files=()
for bk in 8 16 32; do for pad in 0 1 4; do
  f=$M/hopper_v10_bk${bk}_pad${pad}.mcpl
  sed "s/const int bk = 16; /const int bk = $bk; /; s/const int pad = 4;/const int pad = $pad;/" \
    examples/matmul/hopper_v10.mcpl > $f
  files+=("$f specialize" "$f specialize maxnreg=128")
done; done
for size in 4096 2048; do
  timeout 280 python3 benchmarks/opencl/matmul_variants.py "${files[@]}" \
    --size $size --repeats 20 --out "$OUT/s$size" 2>&1 | grep -v "^ *{" | grep -v Warn | cut -c1-100
done
