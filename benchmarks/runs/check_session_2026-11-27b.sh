#!/usr/bin/env bash
# GPU machine, end of the 2026-11-27 (second) session:
#   1. the GPU twins of the host-code register limit, the register limit and relaxed math
#      (tests/opencl/test_host_c_register_limit.py, test_register_limit.py,
#      test_fast_math.py with NVIDIA's driver), every test's outcome listed;
#   2. the time feedback of vector_add gpu_v1 in blocks of 64 threads at hopper (block
#      dispatch) beside `mcl run`'s time of it;
#   3. the fidelity harness's examples again (resources and cold times, no ncu):
#      KERNELS=all eight, to check the record (raw/check_2026-11-27b/).
OUT=${OUT:-check-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 240 python3 -m pytest -p no:cacheprovider tests/opencl/test_host_c_register_limit.py \
  tests/opencl/test_register_limit.py tests/opencl/test_fast_math.py -rA 2>&1 \
  | grep -E "^(PASSED|FAILED|SKIPPED|ERROR)|passed|failed" | tail -40
sed "s/nrThreads = 256;/nrThreads = 64;/" examples/vector_add/gpu_v1.mcpl > /tmp/va64.mcpl
timeout 60 python3 -m mcl.cli translate --to hopper /tmp/va64.mcpl -o /tmp/va64h.mcpl
timeout 60 python3 -m mcl.cli feedback /tmp/va64h.mcpl --set n=16777216 --only time 2>&1 | grep "feedback-time" | cut -c1-160
timeout 60 python3 -m mcl.cli run /tmp/va64h.mcpl --set n=16777216 2>&1 | tail -2
KERNELS="black_scholes convolution gesummv histogram matmul reduction spmv_csr vector_add" \
  T_RES=150 T_TIME=170 T_NCU=0 OUT="$OUT/fidelity" bash benchmarks/fidelity/run_gpu.sh 2>&1 | tail -4
rm -f "$OUT/fidelity/ptx.tgz"
