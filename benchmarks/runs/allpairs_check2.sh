#!/usr/bin/env bash
# After allpairs_check.sh (NVIDIA right everywhere; the GPU machine's PoCL 5.0 wrong for
# 9 cases in every run, one thread or many): the failing tilings on that PoCL built
# without optimisation, and its kernel cache off.
OUT=${OUT:-allpairs-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
P=benchmarks/skel/allpairs_check.py
T="64x64x16/4x4 32x32x24/4x4@d 32x32x24/4x4@i 32x64x4/2x8@r"
( POCL_DEVICES=pthread timeout 300 python3 $P --repeats 1 --tiles $T --options=-cl-opt-disable > "$OUT/opt_disable.log" 2>&1 ) &
( POCL_DEVICES=pthread POCL_KERNEL_CACHE=0 timeout 300 python3 $P --repeats 1 --tiles $T > "$OUT/nocache.log" 2>&1 ) &
( POCL_DEVICES=pthread timeout 300 python3 $P --repeats 1 --tiles $T --options=-cl-fast-relaxed-math > "$OUT/relaxed.log" 2>&1 ) &
wait
for f in opt_disable nocache relaxed; do echo "== $f"; grep -v "SubCFG\|Warning\|lambda" "$OUT/$f.log" | tail -12; done
