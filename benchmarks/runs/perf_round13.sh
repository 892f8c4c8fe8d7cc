#!/usr/bin/env bash
# Issue-20 exploration, round 13 (GPU machine): hand edits of the generated
# hopper_v10 (specialised at 4096, 2-D grid) toward Lift's fastest mm.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/v10_variants.py /tmp/v10v
timeout 200 python3 benchmarks/opencl/matmul_variants.py /tmp/v10v/*.cl \
  --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
timeout 60 python3 benchmarks/opencl/matmul_variants.py benchmarks/opencl/matmul_hand/lift_best_4096.cl --local 16x16 \
  --size 4096 --out "$OUT/lift" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/matmul_variants_4096.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40], v.get('ptx'))"
