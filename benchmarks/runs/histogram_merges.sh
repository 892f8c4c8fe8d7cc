#!/usr/bin/env bash
# The GPU machine: what histogram's merges of each block's bins into hist cost
# (histogram_data.py with a merge-free twin of every version that merges, on uniform and
# reference.py's data: mcl.analyses.atomics.queued_seconds' updates at the blocks' end),
# and what a load whose lanes each read their own row takes by where the lanes' words
# fall in the L1's banks (lane_rows_probe.py). Results: $OUT/histogram_data.json,
# $OUT/lane_rows_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/histogram_merges.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
echo "== histogram_data.py --merge-free" >> "$OUT/probes.log"
python3 benchmarks/opencl/histogram_data.py --versions gpu_v1,nvidia_v1,hopper_v1,hopper_v2 \
  --data uniform,reference --merge-free --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
echo "== lane_rows_probe.py" >> "$OUT/probes.log"
python3 benchmarks/opencl/lane_rows_probe.py --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
