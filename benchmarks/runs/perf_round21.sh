#!/usr/bin/env bash
# Issue-20 round 21 (GPU machine): gesummv and black_scholes versions with the sizes
# specialised at build time (case_studies/run.py --specialize), gesummv hopper_v2
# over unroll x warps again.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
V=/tmp/var21; mkdir -p $V
for u in 4 8 16; do for w in 4 8; do
  sed "s/const int unroll = 8; /const int unroll = $u; /; s/const int nrWarps = 8;/const int nrWarps = $w;/" \
    examples/gesummv/hopper_v2.mcpl > $V/hopper_v2u${u}w${w}.mcpl; done; done
timeout 250 python3 benchmarks/case_studies/run.py --kernels gesummv,black_scholes --specialize \
  --extra "gesummv=$V/*.mcpl" --out "$OUT/cs" --budget-s 200 2>&1 | grep -v "^  " | tail -2
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json"
