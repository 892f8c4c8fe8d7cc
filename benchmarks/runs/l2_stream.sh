#!/usr/bin/env bash
# The GPU machine: how many bytes a second the L2 delivers to the SMs from data it holds
# (l2_stream_probe.py: 16 and 32 MB read apart, each element once a pass, and together,
# every SM the whole buffer). Results: $OUT/l2_stream_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/l2_stream.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/l2_stream_probe.py --mb 8 16 32 --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
