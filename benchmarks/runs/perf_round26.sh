#!/usr/bin/env bash
# Issue-20 round 26 (GPU machine): hopper_v10 with its k-tile loop unrolled by 2 in
# the source (`for cur < 2` inside `for l2 += 2`: the buffer index a constant after
# unrolling, every shared-memory address a base plus a constant), beside hopper_v10,
# each specialised with and without `.maxnreg 128`, at 4096^3 and 2048^3 against cuBLAS.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
M=/tmp/v10u; mkdir -p $M
python3 - <<'PY'
from pathlib import Path
s = Path("examples/matmul/hopper_v10.mcpl").read_text()
s = s.replace("""        for (int l = 0; l < nrPhases; l++) {
          int cur = l % 2;""", """        for (int l2 = 0; l2 < nrPhases; l2 += 2) {
         for (int cur = 0; cur < 2; cur++) {
          int l = l2 + cur;""")
s = s.replace("""          barrier(shared);
        }

        for (int ei = 0; ei < tm; ei++) {""", """          barrier(shared);
         }
        }

        for (int ei = 0; ei < tm; ei++) {""")
Path("/tmp/v10u/hopper_v10_u2.mcpl").write_text(s)
PY
files=()
for f in examples/matmul/hopper_v10.mcpl $M/hopper_v10_u2.mcpl; do
  files+=("$f specialize" "$f specialize maxnreg=128"); done
for size in 4096 2048; do
  timeout 250 python3 benchmarks/opencl/matmul_variants.py "${files[@]}" \
    --size $size --repeats 20 --out "$OUT/s$size" 2>&1 | grep -v "^ *{" | grep -v Warn | cut -c1-100
done
timeout 200 python3 -m pytest -q -p no:cacheprovider tests/opencl/test_register_limit.py -rs 2>&1 | grep -v Warn | tail -4
