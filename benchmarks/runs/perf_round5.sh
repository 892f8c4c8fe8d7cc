#!/usr/bin/env bash
# Issue-20 exploration, round 5 (GPU machine): matmul v8 (prologue like v5), and
# the helpers' branches exported to .gpu_try/: convolution hopper_v2 sweep,
# Lift mm candidates.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 100 python3 benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v7.mcpl examples/matmul/hopper_v8.mcpl \
  --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-100
python3 -c "
import json; d=json.load(open('$OUT/matmul_variants_4096.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-90:-30], v.get('ptx'))"
ROOT=$PWD
cd $ROOT/.gpu_try/conv && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 benchmarks/opencl/conv_variants.py \
  examples/convolution/hopper_v1.mcpl "examples/convolution/hopper_v2.mcpl rows=2,4,8 cols=4,8 nrWarps=4,8" \
  --budget 150 --out "$OUT/conv" 2>&1 | grep -v Warn | tail -25
cd $ROOT/.gpu_try/liftmm && PYTHONPATH=/tmp/site:$PWD timeout 200 python3 benchmarks/lift/mm_candidates.py \
  --out "$OUT/liftmm" --max-seconds 150 2>&1 | grep -v Warn | tail -25
