#!/usr/bin/env bash
# benchmarks/skel/allpairs_variants.py on the GPU machine's PoCL 5.0 (and on NVIDIA's
# driver, right with every variant or not): which construct of AllPairs's kernel that
# PoCL gets wrong.
OUT=${OUT:-allpairs-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
P=benchmarks/skel/allpairs_variants.py
( POCL_DEVICES=pthread timeout 400 python3 $P --out "$OUT/variants_pocl.json" > "$OUT/variants_pocl.log" 2>&1 ) &
( timeout 400 python3 $P --platform NVIDIA --out "$OUT/variants_nvidia.json" > "$OUT/variants_nvidia.log" 2>&1 ) &
wait
for f in variants_pocl variants_nvidia; do echo "== $f"; grep -v "SubCFG\|Warning\|lambda" "$OUT/$f.log" | tail -16; done
