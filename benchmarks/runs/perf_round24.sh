#!/usr/bin/env bash
# Issue-20 round 24 (GPU machine): `mcl run --max-registers` end to end (the limit
# written into the PTX by mcl.opencl.vendor.rebuild_capped): matmul hopper_v10 and
# hopper_v10 with an unpadded a tile (163 registers, 1 block per SM), each with and
# without --max-registers 128, at 4096^3 (verified against numpy by mcl run); the
# feedback of the unpadded one with NVIDIA's registers; the register-limit tests.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
sed "s/const int pad = 4;/const int pad = 0;/" examples/matmul/hopper_v10.mcpl > examples/matmul/hopper_v10_pad0.mcpl
for f in hopper_v10 hopper_v10_pad0; do for cap in "" "--max-registers 128"; do
  timeout 120 python3 -m mcl.cli run examples/matmul/$f.mcpl --specialize --repeat 20 $cap 2>&1 | grep -v Warn | tail -3
done; done
timeout 120 python3 -m mcl.cli feedback examples/matmul/hopper_v10_pad0.mcpl --specialize --only occupancy 2>&1 | grep -A3 "slots" | head -6
rm examples/matmul/hopper_v10_pad0.mcpl
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/opencl/test_register_limit.py -rs 2>&1 | tail -5
