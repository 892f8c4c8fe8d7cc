#!/usr/bin/env bash
# Issue-20 round 30 (GPU machine): the black_scholes case study (all versions, the
# OpenCL copy ceiling measured in the same run) built with NVIDIA's precise math and
# with relaxed math (--fast-math: mcl.compile(fast_math=True)), one after the other.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for fm in "" "--fast-math"; do
  d="$OUT/cs${fm:+_fast_math}"
  timeout 250 python3 benchmarks/case_studies/run.py --kernels black_scholes $fm --out "$d" \
    --budget-s 200 2>&1 | grep -v "^  " | tail -2
  python3 benchmarks/runs/summarise.py "$d/results.json" 2>&1 | tail -12
done
