#!/usr/bin/env bash
# Round 33 (GPU machine): the H100's work-group dispatch rate
# (benchmarks/opencl/dispatch_rate.py), for hopper.target's block_dispatch_rate.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 200 python3 benchmarks/opencl/dispatch_rate.py --out "$OUT"
