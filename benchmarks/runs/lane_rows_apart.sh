#!/usr/bin/env bash
# The GPU machine: lane_rows_probe.py with rows that do not overlap (--apart), whose lanes'
# words lie 1 to 32 deep in a bank of the L1, and CSR's rows: what a warp's load whose
# lanes each read their own row takes, apart from the sectors neighbouring rows share.
# Results: $OUT/lane_rows_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/lane_rows_apart.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/lane_rows_probe.py --apart --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
