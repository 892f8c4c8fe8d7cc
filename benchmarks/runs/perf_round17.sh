#!/usr/bin/env bash
# Issue-20 round 17 (GPU machine): Lift's convolution candidates (register blocking,
# filter in constant memory) beside the MCPL versions, and Lift's mm candidates
# against cuBLAS, after the merges of liftconv and liftmm.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 290 python3 benchmarks/lift/conv_candidates.py --out "$OUT/lift_conv" 2>&1 | grep -v Warn | tail -30
timeout 250 python3 benchmarks/lift/mm_candidates.py --out "$OUT/lift_mm" 2>&1 | grep -v Warn | tail -20
