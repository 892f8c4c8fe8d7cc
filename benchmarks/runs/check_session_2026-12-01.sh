#!/usr/bin/env bash
# GPU machine, 2026-12-01 session, first batch:
#   1. the examples timed cold as the H200 record has them (measure.py time --cold, with
#      the compiler's registers): the reductions' float atomicAdd now compares the bits it
#      swapped, and the record (tests/analyses/fidelity/h200_times.json) was taken before;
#   2. benchmarks/runs/allpairs_check.sh: AllPairs's tilings on PoCL 5.0 now that its
#      kernel is built there without `#pragma unroll` (mcl.opencl.device.unrolls_wrongly).
OUT=${OUT:-check-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.csv"
timeout 200 python3 benchmarks/fidelity/measure.py time --cold --out "$OUT/times" 2>&1 | tail -4
OUT="$OUT/allpairs" timeout 330 bash benchmarks/runs/allpairs_check.sh 2>&1 | tail -60
