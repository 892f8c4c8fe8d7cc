#!/usr/bin/env bash
# Issue-20 exploration, round 6 (GPU machine): matmul hopper_v9 (no guards, proven
# alignment) against v7 and cuBLAS at 4096 and 2048.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for s in 4096 2048; do
timeout 100 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl examples/matmul/hopper_v9.mcpl \
  "examples/matmul/hopper_v9.mcpl -cl-nv-maxrregcount=128" --size $s --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-100
python3 -c "
import json; d=json.load(open('$OUT/matmul_variants_$s.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-90:-30], v.get('ptx'))"
done
