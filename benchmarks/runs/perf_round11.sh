#!/usr/bin/env bash
# Issue-20 exploration, round 11 (GPU machine): matmul hopper_v10 (v7's maps,
# 128-bit b loads, no guards, alignment proven) against v7, Lift's best and cuBLAS.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for s in 4096 2048; do
timeout 200 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl examples/matmul/hopper_v10.mcpl \
  "examples/matmul/hopper_v10.mcpl specialize" --size $s --out "$OUT/$s" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/$s/matmul_variants_$s.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40], v.get('ptx'))"
done
timeout 60 python3 benchmarks/opencl/matmul_variants.py benchmarks/opencl/matmul_hand/lift_best_4096.cl --local 16x16 \
  --size 4096 --out "$OUT/lift" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
