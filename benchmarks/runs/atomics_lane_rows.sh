#!/usr/bin/env bash
# The GPU machine: the two examples whose predicted times are furthest from the H200's.
# histogram perfect (global atomic adds whose lanes the data spread over buckets,
# predicted 0.19 ms, measured 21.4 ms): atomic_spread_probe.py at 2^24 and 2^26
# work-items; spmv_csr perfect (a thread per row, predicted 2.1 times its time in the
# load-store path): lane_rows_probe.py. Results: $OUT/atomic_spread_24.json,
# $OUT/atomic_spread_26.json, $OUT/lane_rows_probe.json, the log $OUT/probes.log.
#     OUT=DIR bash benchmarks/runs/atomics_lane_rows.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
for n in 24 26; do
  mkdir -p "$OUT/a$n"
  echo "== atomic_spread_probe.py --log2n $n" >> "$OUT/probes.log"
  python3 benchmarks/opencl/atomic_spread_probe.py --log2n "$n" --out "$OUT/a$n" \
    >> "$OUT/probes.log" 2>&1
  mv "$OUT/a$n/atomic_spread_probe.json" "$OUT/atomic_spread_$n.json" && rmdir "$OUT/a$n"
done
echo "== lane_rows_probe.py" >> "$OUT/probes.log"
python3 benchmarks/opencl/lane_rows_probe.py --out "$OUT" >> "$OUT/probes.log" 2>&1
