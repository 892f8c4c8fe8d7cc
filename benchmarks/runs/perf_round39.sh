#!/usr/bin/env bash
# Issue-20 round 39 (GPU machine): matmul v11_warp_patch (v11 with each warp on a 4 x 8
# patch of the thread grid) beside v11 and cuBLAS SGEMM, at 4096^3 and 2048^3, three
# times each, with other warp patches of the same code:
#   wn4   a warp on 8 x 4 threads     wn2   on 16 x 2     wn16  on 2 x 16 (v11's patch)
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 - <<'PY'
import sys
sys.path.insert(0, "benchmarks/fidelity")
from pathlib import Path
import fidelity_cases as C
src = Path("benchmarks/opencl/matmul_mcpl/v11_warp_patch.mcpl").read_text()
for wn in (4, 2, 16):
    Path(f"/tmp/wn{wn}.mcpl").write_text(C.with_consts(src, {"wn": wn}))
PY
for run in 1 2 3; do
  for size in 4096 2048; do
    timeout 200 python3 benchmarks/opencl/matmul_variants.py \
      "examples/matmul/hopper_v11.mcpl specialize" "benchmarks/opencl/matmul_mcpl/v11_warp_patch.mcpl specialize" \
      "/tmp/wn4.mcpl specialize" "/tmp/wn2.mcpl specialize" "/tmp/wn16.mcpl specialize" \
      --size $size --tile 128x256 --repeats 20 --out "$OUT/run$run" 2>&1 | grep -v "^ *{" \
      | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -7
  done
done
