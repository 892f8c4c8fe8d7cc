#!/usr/bin/env bash
# The GPU machine: Lift's convolution candidates beside every MCPL version of
# examples/convolution (benchmarks/lift/conv_candidates.py) and Lift's mm candidates
# against cuBLAS (benchmarks/lift/mm_candidates.py), in one run each.
# Results: $OUT/lift_conv/, $OUT/lift_mm/, the logs $OUT/*.log.
#     OUT=DIR bash benchmarks/runs/lift_h200.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
timeout 330 python3 benchmarks/lift/conv_candidates.py --out "$OUT/lift_conv" "$@" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" > "$OUT/lift_conv.log"
tail -32 "$OUT/lift_conv.log"
timeout 200 python3 benchmarks/lift/mm_candidates.py --out "$OUT/lift_mm" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" > "$OUT/lift_mm.log"
tail -20 "$OUT/lift_mm.log"
