#!/usr/bin/env bash
# The GPU machine: when the work-groups of a grid resident all at once end their
# streams, and what the stream hides of the atomic updates they make at their end
# (benchmarks/opencl/block_end_probe.py; results under $OUT).
#     OUT=DIR bash benchmarks/runs/block_end.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/block_end_probe.py --out "$OUT" 2>&1 | tee "$OUT/block_end.log"
