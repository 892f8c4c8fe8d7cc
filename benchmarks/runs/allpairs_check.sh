#!/usr/bin/env bash
# benchmarks/skel/allpairs_check.py on the GPU machine: AllPairs's tilings on NVIDIA's
# OpenCL and on the machine's PoCL (5.0), whose runs of tests/skel/test_allpairs.py
# failed for some tilings; PoCL also with one thread (work-groups one at a time) and
# with its other work-group method, to tell a race between work-groups or a way of
# compiling the barriers from the kernel.
OUT=${OUT:-allpairs-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
P=benchmarks/skel/allpairs_check.py
( timeout 300 python3 $P --platform NVIDIA --repeats 5 --out "$OUT/nvidia.json" > "$OUT/nvidia.log" 2>&1 ) &
( POCL_DEVICES=pthread timeout 300 python3 $P --repeats 5 --out "$OUT/pocl.json" > "$OUT/pocl.log" 2>&1 ) &
( POCL_DEVICES=pthread POCL_MAX_PTHREAD_COUNT=1 timeout 300 python3 $P --repeats 3 --out "$OUT/pocl_1thread.json" > "$OUT/pocl_1thread.log" 2>&1 ) &
( POCL_DEVICES=pthread POCL_WORK_GROUP_METHOD=cbs timeout 300 python3 $P --repeats 3 --out "$OUT/pocl_cbs.json" > "$OUT/pocl_cbs.log" 2>&1 ) &
wait
for f in nvidia pocl pocl_1thread pocl_cbs; do echo "== $f"; tail -12 "$OUT/$f.log"; done
