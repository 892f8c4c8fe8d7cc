#!/usr/bin/env bash
# Issue-20 exploration, round 10b (GPU machine): does NVIDIA's OpenCL honour
# -cl-nv-maxrregcount (JIT cache off; "=N" and " N")?
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
export CUDA_CACHE_DISABLE=1
timeout 200 python3 benchmarks/opencl/matmul_variants.py "examples/matmul/hopper_v9.mcpl -cl-nv-maxrregcount 128" \
  examples/matmul/hopper_v9.mcpl "examples/matmul/hopper_v9.mcpl -cl-nv-maxrregcount 96" "benchmarks/opencl/matmul_hand/vec4.cl -cl-nv-maxrregcount 64" \
  --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/matmul_variants_4096.json'))
for k,v in d['variants'].items(): print(k, v['options'], v.get('ptxas','')[-100:-40], v.get('ptx'))"
