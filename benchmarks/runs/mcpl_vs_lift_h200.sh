#!/usr/bin/env bash
# The GPU machine: MCPL's refined versions against Lift's exploration for vector_add,
# matmul, gesummv, reduction and convolution (benchmarks/mcpl_vs_lift.py, budget 8),
# as the 2026-11-22 run on the H100 (benchmarks/results/mcpl_vs_lift/), at the leaf h200 (its
# roofline: the H200's 4.8 TB/s).
# Results: $OUT/mcpl_vs_lift.md, the rest in $OUT/mcpl_vs_lift.tgz.
#     OUT=DIR bash benchmarks/runs/mcpl_vs_lift_h200.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT/run"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
timeout 560 python3 benchmarks/mcpl_vs_lift.py --leaf h200 --budget 8 --per-kernel 150 \
  --max-version-s 10 --out "$OUT/run" 2>&1 | grep -v -e CompilerWarning -e "lambda: self._prg" \
  | tail -5
cp "$OUT/run/mcpl_vs_lift.md" "$OUT/" 2>/dev/null
tar czf "$OUT/mcpl_vs_lift.tgz" -C "$OUT/run" . && rm -r "$OUT/run"
sed -n 1,16p "$OUT/mcpl_vs_lift.md"
