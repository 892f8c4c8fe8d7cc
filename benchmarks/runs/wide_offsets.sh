#!/usr/bin/env bash
# GPU machine: arrays of 2^31 elements or more (benchmarks/opencl/wide_offsets_check.py):
# gesummv hopper_v1 at n = 50000 (A and B 10 GB each) built as mcl builds it now (64-bit
# element offsets at these sizes) and with 32-bit offsets as before, each in a process of
# its own, against numpy; then both builds timed at n = 46000, where 32 bits suffice.
OUT=${OUT:-wide-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
P=benchmarks/opencl/wide_offsets_check.py
for mode in auto int; do
  timeout 200 python3 $P --offsets $mode --out "$OUT/$mode.json" > "$OUT/$mode.log" 2>&1
  echo "rc=$?" >> "$OUT/$mode.log"
done
for mode in int long; do
  timeout 120 python3 $P --offsets $mode --time 46000 --out "$OUT/time_$mode.json" \
    > "$OUT/time_$mode.log" 2>&1
  echo "rc=$?" >> "$OUT/time_$mode.log"
done
for f in auto int time_int time_long; do echo "== $f"; tail -3 "$OUT/$f.log" | cut -c1-400; done
