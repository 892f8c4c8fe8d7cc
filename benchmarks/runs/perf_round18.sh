#!/usr/bin/env bash
# Issue-20 round 18 (GPU machine): matmul hopper_v10 (specialised) over the depth of
# a phase (bk 8, 16) and the block-row groups (4, 8, 16), against cuBLAS.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/var18; mkdir -p $V
for bk in 8 16; do for g in 4 8 16; do
  sed "s/const int bk = 16;/const int bk = $bk;/; s/const int group = 8; /const int group = $g; /" \
    examples/matmul/hopper_v10.mcpl > $V/hopper_v10_bk${bk}_g${g}.mcpl; done; done
for s in 4096 2048; do
ARGS=(); for f in $V/*.mcpl; do ARGS+=("$f specialize"); done
timeout 200 python3 benchmarks/opencl/matmul_variants.py "${ARGS[@]}" --size $s --out "$OUT/$s" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/$s/matmul_variants_$s.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40])"
done
