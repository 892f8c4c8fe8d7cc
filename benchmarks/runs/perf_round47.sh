#!/usr/bin/env bash
# Issue-20 round 47 (GPU machine): where the warps of matmul hopper_v12 stall, beside
# v11 and cuBLAS's kernel (Nsight Compute, stall reasons per issued instruction, and
# issue-slot use), at 4096^3.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
METRICS='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__inst_issued.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum'
timeout 120 "$NCU" --metrics "$METRICS" -k regex:gemm --launch-skip 2 --launch-count 1 \
  python3 benchmarks/opencl/cublas_sgemm.py --size 4096 > "$OUT/stalls_cublas.txt" 2>&1
for v in hopper_v11 hopper_v12; do
  timeout 120 "$NCU" --metrics "$METRICS" -k regex:matmul --launch-count 1 \
    python3 benchmarks/opencl/ncu_matmul.py examples/matmul/$v.mcpl > "$OUT/stalls_$v.txt" 2>&1
done
paste <(grep -E "stalled|inst_issued|inst_executed" "$OUT/stalls_cublas.txt" | awk '{print $1, $NF}') \
      <(grep -E "stalled|inst_issued|inst_executed" "$OUT/stalls_hopper_v11.txt" | awk '{print $NF}') \
      <(grep -E "stalled|inst_issued|inst_executed" "$OUT/stalls_hopper_v12.txt" | awk '{print $NF}') \
  | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' \
  | awk '$2 > 0.01 || $3 > 0.01 || $4 > 0.01'
