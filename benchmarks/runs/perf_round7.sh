#!/usr/bin/env bash
# Issue-20 exploration, round 7 (GPU machine): what separates matmul hopper_v9 from
# Lift's fastest mm (registers, lanes, block order, padding).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/runs/mm_variants.py examples/matmul/hopper_v9.mcpl /tmp/mv l216 pad0 2d l216+pad0+2d l216+2d
timeout 200 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl examples/matmul/hopper_v9.mcpl \
  /tmp/mv/*.mcpl --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
timeout 60 python3 benchmarks/opencl/matmul_variants.py benchmarks/opencl/matmul_hand/lift_best_4096.cl --local 16x16 \
  --size 4096 --out "$OUT/lift" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
for f in ('$OUT/matmul_variants_4096.json', '$OUT/lift/matmul_variants_4096.json'):
  d=json.load(open(f))
  for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40], v.get('ptx'))"
