#!/usr/bin/env bash
# GPU machine: vector_add's grid-stride loop over the number of work-groups and the
# arrays' placement (benchmarks/opencl/grid_stride_probe.py), then the memory-bound
# kernels' versions and sweep variants timed cold twice (perf_round31.sh's first part:
# sweep_times_1.json, sweep_times_2.json). Results under $OUT.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv > "$OUT/device.txt"
timeout ${T_PROBE:-150} python3 benchmarks/opencl/grid_stride_probe.py --out "$OUT" 2>&1 | tee "$OUT/grid_stride.log" | tail -80
[ "${SWEEP:-1}" = 0 ] && exit 0
OUT=$OUT PROBE=0 SPLIT=0 T_TIME=${T_TIME:-150} bash benchmarks/runs/perf_round31.sh
