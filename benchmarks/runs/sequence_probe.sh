#!/usr/bin/env bash
# The GPU machine: whether work-items that handle their elements one after the other,
# with arithmetic between the round trips, cost more the more elements each handles
# (benchmarks/opencl/sequence_probe.py; results under $OUT).
#     OUT=DIR [TIMES=0] bash benchmarks/runs/sequence_probe.sh  (TIMES=0: the ncu part only)
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/device.txt"
[ "${TIMES:-1}" = 1 ] && python3 benchmarks/opencl/sequence_probe.py --out "$OUT" 2>&1 | tee "$OUT/sequence_probe.log"
# each configuration launched once under ncu: its duration at ncu's clocks, the warps
# resident on average (achieved occupancy) and the issue slots used
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 240 "$NCU" --csv --target-processes all -k 'regex:^(chunk|stride)$' \
  --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__inst_executed.sum \
  --log-file "$OUT/sequence_ncu.csv" python3 benchmarks/opencl/sequence_probe.py --cuda \
  > "$OUT/sequence_ncu.log" 2>&1
tail -3 "$OUT/sequence_ncu.log"
