#!/usr/bin/env bash
# Issue-15/20 round 28 (GPU machine): the cost of each built-in math function and of a
# division in multiply-adds with NVIDIA's OpenCL compiler, precise (the default) and
# relaxed (benchmarks/opencl/math_costs.py): the figures of hopper.target's
# function_costs.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 250 python3 benchmarks/opencl/math_costs.py --out "$OUT/precise" 2>&1 | grep -v Warn | grep -v lambda
timeout 250 python3 benchmarks/opencl/math_costs.py --options=-cl-fast-relaxed-math --out "$OUT/relaxed" 2>&1 | grep -v Warn | grep -v lambda
