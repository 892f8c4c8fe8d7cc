#!/usr/bin/env bash
# Issue-20 round 16 (GPU machine): convolution hopper_v2 over its constants
# (benchmarks/opencl/conv_variants.py), after the merge of the conv branch.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
timeout 300 python3 benchmarks/opencl/conv_variants.py examples/convolution/hopper_v1.mcpl \
  "examples/convolution/hopper_v2.mcpl rows=2,4,8 cols=4,8" "examples/convolution/hopper_v2.mcpl rows=4,8 fg=3,5" \
  "examples/convolution/hopper_v2.mcpl rows=4,8 nrWarps=4" "examples/convolution/hopper_v2.mcpl rows=4 tcols=16" \
  --out "$OUT/conv" 2>&1 | grep -v Warn | grep -E "^\[|best|regs" | cut -c1-160
