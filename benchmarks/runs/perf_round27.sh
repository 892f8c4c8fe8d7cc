#!/usr/bin/env bash
# Issue-20 round 27 (GPU machine): black_scholes's versions with NVIDIA's precise math
# (the OpenCL default) and with the relaxed math options, beside a kernel that moves
# the same bytes with no arithmetic (benchmarks/opencl/bs_math.py), median of 30 warm
# launches each, verified first; PTX instruction counts.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 400 python3 benchmarks/opencl/bs_math.py --repeats 30 --out "$OUT" 2>&1 | grep -v Warn | grep -v "lambda"
