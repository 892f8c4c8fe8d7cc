#!/usr/bin/env bash
# GPU machine: the register limit end to end (tests/opencl/test_register_limit.py with
# NVIDIA's driver, every test's outcome listed), the occupancy feedback of hopper_v10
# with an unpadded tile with the NVIDIA compiler's registers (it proposes the limit),
# and spmv_csr's requests message (a warp's slowest lane).
OUT=${OUT:-check-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 300 python3 -m pytest -p no:cacheprovider tests/opencl/test_register_limit.py -rA 2>&1 \
  | grep -E "^(PASSED|FAILED|SKIPPED|ERROR)|passed|failed" | tail -20
sed "s/const int pad = 4;/const int pad = 0;/" examples/matmul/hopper_v10.mcpl > examples/matmul/hopper_v10_pad0.mcpl
timeout 120 python3 -m mcl.cli feedback examples/matmul/hopper_v10_pad0.mcpl --specialize --only occupancy 2>&1 \
  | grep -E "slots|help" | head -4
rm examples/matmul/hopper_v10_pad0.mcpl
timeout 120 python3 -m mcl.cli feedback examples/spmv_csr/hopper_v1.mcpl 2>&1 | grep -o "global loads:.*slowest lane"
