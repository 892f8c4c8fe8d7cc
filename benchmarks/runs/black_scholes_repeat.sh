#!/usr/bin/env bash
# black_scholes' five versions timed cold R times over (measure.py time --cold: each
# launch after a write and a read of 256 MB, best of 10 per run), to tell which of their
# differences of a few percent the runs resolve: the fidelity REPORT's two runs differ
# by up to 26% (nvidia_v1 37.4 against 29.8 µs), too much to rank gpu_v1, nvidia_v1
# and hopper_v1. Writes $OUT/times_<r>.json.
#   bash benchmarks/runs/black_scholes_repeat.sh      (R=8)
OUT=${OUT:-bs-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/device.txt"
for r in $(seq 1 ${R:-8}); do
  timeout ${T_TIME:-60} python3 benchmarks/fidelity/measure.py time --cold --kernels black_scholes \
    --out "$OUT" 2>&1 | tail -1
  mv "$OUT/times.json" "$OUT/times_$r.json"
done
