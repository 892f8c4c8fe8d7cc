#!/usr/bin/env bash
# The GPU machine: what spmv_csr's gathers cost (spmv_data.py: every version on its
# random columns, on columns in order and on one column). Results: $OUT/spmv_data.json,
# the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/spmv_data.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/spmv_data.py --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
