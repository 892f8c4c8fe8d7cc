#!/usr/bin/env bash
# Issue-20 round 38 (GPU machine): settings of matmul hopper_v11 beside it, v10 and
# cuBLAS SGEMM, at 4096^3 and 2048^3, twice each:
#   tall       a 256 x 128 block tile, 16 x 8 outputs per thread (a thread loads a
#              whole 16-deep row of a: stores to l_a without bank conflicts)
#   group4 / group16   other numbers of block rows walked before moving right
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 - <<'PY'
import sys
sys.path.insert(0, "benchmarks/fidelity")
from pathlib import Path
import fidelity_cases as C
src = Path("examples/matmul/hopper_v11.mcpl").read_text()
for name, consts in {"tall": {"bm": 256, "bn": 128, "tm": 16, "tn": 8},
                     "group4": {"group": 4}, "group16": {"group": 16}}.items():
    Path(f"/tmp/{name}.mcpl").write_text(C.with_consts(src, consts))
PY
for run in 1 2; do
  for size in 4096 2048; do
    timeout 200 python3 benchmarks/opencl/matmul_variants.py \
      "examples/matmul/hopper_v10.mcpl specialize" "examples/matmul/hopper_v11.mcpl specialize" \
      "/tmp/tall.mcpl specialize" "/tmp/group4.mcpl specialize" "/tmp/group16.mcpl specialize" \
      --size $size --repeats 20 --out "$OUT/run$run" 2>&1 | grep -v "^ *{" \
      | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' | tail -6
  done
done
# the matmul case study (every version at 2048^3 and 4096^3, cuBLAS in the same run),
# merged into benchmarks/results/case_studies/results.json by report.py --rerun
timeout 330 python3 benchmarks/case_studies/run.py --kernels matmul --out "$OUT/cs" \
  --budget-s 300 2>&1 | grep -v "^  " | tail -3
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json" 2>&1 | tail -25
