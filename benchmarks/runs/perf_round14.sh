#!/usr/bin/env bash
# Issue-20 exploration, round 14 (GPU machine): the work-group shape, swapped
# between the generated hopper_v10 (32 x 8) and Lift's fastest mm (16 x 16).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/v10_variants.py /tmp/v10v
H=benchmarks/opencl/matmul_hand
timeout 100 python3 benchmarks/opencl/matmul_variants.py /tmp/v10v/h_base.cl /tmp/v10v/lift_wg32x8.cl \
  --size 4096 --out "$OUT/a" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
timeout 100 python3 benchmarks/opencl/matmul_variants.py $H/lift_best_4096.cl /tmp/v10v/h_wg16x16.cl --local 16x16 \
  --size 4096 --out "$OUT/b" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
for f in ('a','b'):
  d=json.load(open('$OUT/'+f+'/matmul_variants_4096.json'))
  for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40], v.get('ptx'))"
