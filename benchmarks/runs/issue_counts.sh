#!/usr/bin/env bash
# The warp instructions each example version issues, by pipe, and how much of the time
# its schedulers issue, from ncu on the GPU machine: the `issue` part of the time model
# (mcl.analyses.timing) counts the arithmetic's and the memory instructions at one a
# cycle per scheduler; this measures what the compiled kernels issue besides (integer
# and address arithmetic, branches, conversions) and the share of the cycles they issue
# in. The same PTX launched through the CUDA driver as the fidelity harness launches it
# (measure.py launch), once each, at ncu's clocks.
#   bash benchmarks/runs/issue_counts.sh        (results under $OUT; ONLY=a/v1,b/v2)
set -u
OUT=${OUT:-issue-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.csv"
known=$(ncu --query-metrics --chip gh100 2>/dev/null)
METRICS=gpu__time_duration.sum,smsp__inst_executed.sum
for m in smsp__issue_active.avg.pct_of_peak_sustained_active smsp__inst_executed_pipe_fma.sum \
         smsp__inst_executed_pipe_fmaheavy.sum smsp__inst_executed_pipe_alu.sum \
         smsp__inst_executed_pipe_lsu.sum smsp__inst_executed_pipe_xu.sum \
         smsp__inst_executed_pipe_cbu.sum smsp__inst_executed_pipe_adu.sum \
         smsp__inst_executed_pipe_uniform.sum smsp__inst_executed_pipe_fp16.sum \
         smsp__inst_executed_op_global_ld.sum smsp__inst_executed_op_shared_ld.sum \
         smsp__average_warp_latency_issue_stalled_long_scoreboard.ratio \
         smsp__warps_active.avg.per_cycle_active; do
  echo "$known" | grep -qw "${m%%.*}" && METRICS="$METRICS,$m" || echo "ncu has no $m"
done
timeout ${T_NCU:-500} ncu --csv --page raw --target-processes all --metrics "$METRICS" \
  --log-file "$OUT/ncu_issue.csv" python3 benchmarks/fidelity/measure.py launch --out "$OUT" \
  ${ONLY:+--only "$ONLY"} 2>&1 | tail -4 | tee "$OUT/launch.log"
ls -la "$OUT"
