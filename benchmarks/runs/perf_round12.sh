#!/usr/bin/env bash
# Issue-20 exploration, round 12 (GPU machine): matmul hopper_v10 specialised, with
# a 2-D grid (no block-row groups) and/or no padding of l_a, as Lift's best has.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/runs/mm_variants.py examples/matmul/hopper_v10.mcpl /tmp/mv10 2d pad0 2d+pad0
for s in 4096 2048; do
timeout 200 python3 benchmarks/opencl/matmul_variants.py "examples/matmul/hopper_v10.mcpl specialize" \
  "/tmp/mv10/hopper_v10_2d.mcpl specialize" "/tmp/mv10/hopper_v10_pad0.mcpl specialize" \
  "/tmp/mv10/hopper_v10_2d_pad0.mcpl specialize" --size $s --out "$OUT/$s" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/$s/matmul_variants_$s.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40], v.get('ptx'))"
done
