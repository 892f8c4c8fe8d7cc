#!/usr/bin/env bash
# Issue-20 round 37 (GPU machine): matmul with 8 x 16 outputs per thread
# (examples/matmul/hopper_v11.mcpl and the const settings below) beside v10 and
# cuBLAS SGEMM, at 4096^3 and 2048^3, twice each:
#   wide_bk16  hopper_v11: 128 x 256 block tile, 256 threads, 16-deep phases
#   w128_tn16  128 x 128 block tile, 128 threads (8 x 16 each), 2 blocks per SM
#   w128_tm16  the same with 16 x 8 outputs per thread
#   v10same    hopper_v11 at v10's settings (v10's code but for the a tile's load)
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 - <<'PY'
import sys
sys.path.insert(0, "benchmarks/fidelity")
from pathlib import Path
import fidelity_cases as C
src = Path("examples/matmul/hopper_v11.mcpl").read_text()
for name, consts in {"wide_bk16": {}, "w128_tn16": {"bn": 128, "pad": 4},
                     "w128_tm16": {"bn": 128, "tm": 16, "tn": 8, "pad": 4},
                     "v10same": {"bn": 128, "tn": 8, "pad": 4}}.items():
    Path(f"/tmp/{name}.mcpl").write_text(C.with_consts(src, consts))
PY
for run in 1 2; do
  for size in 4096 2048; do
    timeout 200 python3 benchmarks/opencl/matmul_variants.py \
      "examples/matmul/hopper_v10.mcpl specialize" \
      "/tmp/wide_bk16.mcpl specialize" "/tmp/w128_tn16.mcpl specialize" \
      "/tmp/w128_tm16.mcpl specialize" "/tmp/v10same.mcpl specialize" \
      --size $size --repeats 20 --out "$OUT/run$run" 2>&1 | grep -v "^ *{" \
      | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -6
  done
done
