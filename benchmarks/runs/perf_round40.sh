#!/usr/bin/env bash
# Issue-20 round 40 (GPU machine): Nsight Compute on cuBLAS SGEMM's 4096^3 kernel and
# on matmul hopper_v11 (generated, sizes specialised, launched through the CUDA
# driver): the kernel cuBLAS picks, its launch shape and registers, and where the
# warps of both stall.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
timeout 200 "$NCU" --set full -k regex:gemm --launch-skip 2 --launch-count 1 \
  python3 benchmarks/opencl/cublas_sgemm.py --size 4096 > "$OUT/ncu_cublas_4096.txt" 2>&1
grep -E "^  [a-z_0-9]+.*\(|Registers Per|Block Size|Grid Size|Shared Memory Config|Static Shared|Dynamic Shared|Duration|Issue Slots Busy|Achieved Occupancy|Theoretical Occ" \
  "$OUT/ncu_cublas_4096.txt" | head -20
timeout 250 "$NCU" --set full -k regex:matmul \
  python3 benchmarks/opencl/ncu_matmul.py examples/matmul/hopper_v11.mcpl \
  > "$OUT/ncu_v11_4096.txt" 2>&1
grep -E "^  [a-z_0-9]+.*\(|Registers Per|Block Size|Grid Size|Duration|Issue Slots Busy|Achieved Occupancy|hopper_v11" \
  "$OUT/ncu_v11_4096.txt" | head -20
