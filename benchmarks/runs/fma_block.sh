#!/usr/bin/env bash
# The GPU machine: how often the schedulers issue in multiply-add code of the issue-bound
# examples' shapes (benchmarks/opencl/fma_block_probe.py, with each kernel's SASS counts),
# and conv_sass.py again. Results: $OUT/fma_block_probe.json, $OUT/conv_sass/, the logs.
#     OUT=DIR bash benchmarks/runs/fma_block.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/fma_block_probe.py --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" | tee "$OUT/probe.log"
timeout 200 python3 benchmarks/lift/conv_sass.py --choices 2 --out "$OUT/conv_sass" \
  2> "$OUT/conv_sass.log" | tail -8
tar czf "$OUT/conv_sass/sass.tgz" -C "$OUT/conv_sass" sass && rm -r "$OUT/conv_sass/sass"
