#!/usr/bin/env bash
# The GPU machine: whether a gather that waits for its index adds its time to the rest
# of a vector-CSR spmv (gather_chain_probe.py: the x element chosen five ways, x of
# 32 kB, 512 kB, 8 MB). Results: $OUT/gather_chain_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/gather_chain.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/opencl/gather_chain_probe.py --out "$OUT" 2>&1 \
  | grep -v -e CompilerWarning -e "lambda: self._prg" >> "$OUT/probes.log"
