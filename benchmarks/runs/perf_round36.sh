#!/usr/bin/env bash
# Issue-20 round 36 (GPU machine): matmul with more outputs per thread than v10
# (a 128 x 256 block tile, 8 x 16 outputs per thread, one block per SM) beside v10
# and cuBLAS SGEMM, at 4096^3 and 2048^3, twice each: matmul_wide is hopper_v11
# with 8-deep phases and a's rows padded by 4 (run as benchmarks/runs/matmul_wide.mcpl,
# the same code), wide_bk16 is hopper_v11 (16-deep phases, a's rows unpadded: 48 kB).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 - <<'PY'
import sys
sys.path.insert(0, "benchmarks/fidelity")
from pathlib import Path
import fidelity_cases as C
src = Path("examples/matmul/hopper_v11.mcpl").read_text()
Path("/tmp/matmul_wide.mcpl").write_text(C.with_consts(src, {"bk": 8, "pad": 4}))
Path("/tmp/wide_bk16.mcpl").write_text(src)
PY
for run in 1 2; do
  for size in 4096 2048; do
    timeout 200 python3 benchmarks/opencl/matmul_variants.py \
      "examples/matmul/hopper_v10.mcpl specialize" \
      "/tmp/matmul_wide.mcpl specialize" \
      "/tmp/wide_bk16.mcpl specialize" \
      --size $size --repeats 20 --out "$OUT/run$run" 2>&1 | grep -v "^ *{" | tail -5
  done
done
