#!/usr/bin/env bash
# The GPU machine: lane_rows_probe.py --pieces: warps reading 2 to 32 rows, neighbouring
# lanes of a row reading neighbouring floats, the rows' words in the same banks or in
# banks of their own: what a load request of several lines takes by its lines and banks.
# Results: $OUT/lane_rows_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/lane_rows_pieces.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/lane_rows_probe.py --pieces --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
