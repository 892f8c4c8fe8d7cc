#!/usr/bin/env bash
# Issue-20 round 29 (GPU machine): gesummv hopper_v2 (114 registers: 2 blocks of 256
# threads per SM) with `mcl run --max-registers` 85 (3 blocks) and 64 (4 blocks), and
# black_scholes hopper_v2 (40: 6 blocks) with 32 (8 blocks), beside each without,
# at the case studies' sizes, best of 30, verified by mcl run.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
for cap in "" "--max-registers 85" "--max-registers 64" "" ; do
  timeout 100 python3 -m mcl.cli run examples/gesummv/hopper_v2.mcpl --repeat 30 $cap 2>&1 | grep -E "time|registers:|matches|DIFFERS" | tr '\n' ' '; echo " [$cap]"
done
for cap in "" "--max-registers 32" ""; do
  timeout 100 python3 -m mcl.cli run examples/black_scholes/hopper_v2.mcpl --repeat 30 $cap 2>&1 | grep -E "time|registers:|DIFFERS" | tr '\n' ' '; echo " [$cap]"
done
