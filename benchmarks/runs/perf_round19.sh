#!/usr/bin/env bash
# Issue-20 round 19 (GPU machine): Nsight Compute on Lift's fastest mm and on the
# generated hopper_v10 (hand copy h_base.cl), launched through the CUDA driver.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/v10_variants.py /tmp/v10v
H=benchmarks/opencl/matmul_hand
python3 benchmarks/opencl/ncu_matmul.py $H/lift_best_4096.cl:16x16 /tmp/v10v/h_base.cl:32x8 2>&1 | grep -v Warn
for k in $H/lift_best_4096.cl:16x16 /tmp/v10v/h_base.cl:32x8; do
  name=$(basename ${k%%:*} .cl)
  timeout 200 ncu --set full -k regex:matmul -c 1 -o "$OUT/$name" python3 benchmarks/opencl/ncu_matmul.py $k > "$OUT/$name.log" 2>&1
  ncu --import "$OUT/$name.ncu-rep" --page details --print-details all > "$OUT/$name.txt" 2>&1
  ncu --import "$OUT/$name.ncu-rep" --page raw --csv > "$OUT/$name.csv" 2>&1
  rm -f "$OUT/$name.ncu-rep"
  echo "== $name"; grep -E "Duration|Registers Per|Issue Slots Busy|Eligible Warps|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Bank|Executed Instructions  " "$OUT/$name.txt" | head -14
done
