#!/usr/bin/env bash
# Issue-20 round 41 (GPU machine): matmul hopper_v11 with its next k-tile copied from
# global to shared memory asynchronously (PTX cp.async, benchmarks/opencl/matmul_hand/
# async_copy.py) beside v11 as generated, at 4096^3 twice; then where the warps of v11
# and of cuBLAS's kernel stall (Nsight Compute, stall reasons per issued instruction).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/async_copy.py /tmp/async > /dev/null
for run in 1 2; do
  timeout 150 python3 benchmarks/opencl/matmul_variants.py \
    "examples/matmul/hopper_v11.mcpl specialize" "/tmp/async/v11_base.cl local=32x8" \
    "/tmp/async/v11_async_b.cl local=32x8" "/tmp/async/v11_async_ab.cl local=32x8" \
    --size 4096 --tile 128x256 --repeats 20 --out "$OUT/run$run" 2>&1 | grep -v "^ *{" \
    | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -6
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
STALLS='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
timeout 120 "$NCU" --metrics "$STALLS" -k regex:gemm --launch-skip 2 --launch-count 1 \
  python3 benchmarks/opencl/cublas_sgemm.py --size 4096 > "$OUT/stalls_cublas.txt" 2>&1
timeout 120 "$NCU" --metrics "$STALLS" -k regex:matmul --launch-count 1 \
  python3 benchmarks/opencl/ncu_matmul.py examples/matmul/hopper_v11.mcpl \
  > "$OUT/stalls_v11.txt" 2>&1
paste <(grep stalled "$OUT/stalls_cublas.txt" | awk '{print $1, $NF}') \
      <(grep stalled "$OUT/stalls_v11.txt" | awk '{print $NF}') \
  | sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' | awk '$2 > 0.01 || $3 > 0.01'
