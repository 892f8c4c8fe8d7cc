#!/usr/bin/env bash
# Issue-20 exploration, round 15 (GPU machine): black_scholes' reads and writes
# apart; gesummv hopper_v3 (one wave walking the rows) over blocks per SM and runs
# in flight, beside v2 and gpu_v1.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 120 python3 benchmarks/opencl/stream_probe.py --out "$OUT" 2>&1 | grep -E "^bs|^driver|^copy"
V=/tmp/var15; mkdir -p $V
for b in 1 2 4 8; do for u in 4 8 16; do
  sed "s/const int unroll = 8; /const int unroll = $u; /; s/const int blocksPerSM = 4;/const int blocksPerSM = $b;/" \
    examples/gesummv/hopper_v3.mcpl > $V/hopper_v3b${b}u${u}.mcpl; done; done
timeout 200 python3 benchmarks/case_studies/run.py --kernels gesummv --versions gpu_v1,hopper_v2 --extra "gesummv=$V/*.mcpl" \
  --out "$OUT/cs" --budget-s 150 2>&1 | grep -v "^  " | tail -2
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json"
