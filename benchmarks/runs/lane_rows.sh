#!/usr/bin/env bash
# The GPU machine: lane_rows_probe.py in one of its modes: --apart (each lane its own row,
# rows that do not overlap, the lanes' words 1 to 32 deep in a bank of the L1, and CSR's
# rows) or --pieces (warps reading 2 to 32 rows, neighbouring lanes of a row reading
# neighbouring floats, the rows' words in the same banks or in banks of their own): what
# a warp's load of several lines takes by its lines and banks. Results:
# $OUT/lane_rows_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/lane_rows.sh --apart
#     OUT=DIR bash benchmarks/runs/lane_rows.sh --pieces
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/lane_rows_probe.py "$@" --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
