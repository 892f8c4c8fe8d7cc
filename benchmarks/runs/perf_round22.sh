#!/usr/bin/env bash
# Issue-20 round 22 (GPU machine): the register limit as a PTX directive. NVIDIA's
# OpenCL driver ignores -cl-nv-maxrregcount (round 10) but builds a program from its
# PTX; matmul_variants.py's `maxnreg=N` rebuilds a kernel with `.maxnreg N` on its
# entry. The bisect kernels of Lift's mm toward hopper_v10 (chain and singles; most
# take 129-161 registers, one block of 256 threads per SM) with and without the cap
# at 128 (two blocks), hopper_v10 as generated beside them.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
B=/tmp/bis22; S=/tmp/bis22s
python3 benchmarks/opencl/matmul_hand/bisect_lift_v10.py $B > /dev/null
python3 benchmarks/opencl/matmul_hand/bisect_lift_v10.py $S --singles > /dev/null
files=()
for f in $B/b0[0-9]*.cl $B/b1*.cl $B/s_*.cl $S/x_*.cl; do
  l=$(grep -oh "$(basename $f) local=[0-9x]*" $B/README.txt $S/README.txt | head -1 | cut -d' ' -f2)
  files+=("$f ${l:-local=32x8}" "$f ${l:-local=32x8} maxnreg=128")
done
timeout 500 python3 benchmarks/opencl/matmul_variants.py "${files[@]}" \
  "examples/matmul/hopper_v10.mcpl specialize" --size 4096 --repeats 20 --out "$OUT" \
  2>&1 | grep -v "^ *{" 
