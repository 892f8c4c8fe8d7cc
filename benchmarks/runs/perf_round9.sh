#!/usr/bin/env bash
# Issue-20 exploration, round 9 (GPU machine): matmul hopper_v7 with 128-bit loads
# of b (hopper_v7_bvec: columns 4 bc .. 4 bc + 3 per thread), to find which change
# of v9 costs the registers.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 200 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl examples/matmul/hopper_v9.mcpl \
  benchmarks/runs/hopper_v7_bvec.mcpl "benchmarks/runs/hopper_v7_bvec.mcpl specialize" \
  --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/matmul_variants_4096.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40], v.get('ptx'))"
