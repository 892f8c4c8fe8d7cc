#!/usr/bin/env bash
# Issue-20 round 54 (GPU machine): hopper_v12 with other settings of its constants beside
# v12 and cuBLAS SGEMM: bn = 128 (128 x 128 tiles of 4 warps, two blocks an SM, whose
# barriers need not coincide), bm = 256 and bn = 128 (cuBLAS's 256 x 128 tile), and the
# grid's walk (group: block rows walked before moving right) 4 and 16 instead of 8;
# 4096^3 twice, 2048^3 once.
. benchmarks/runs/matmul_lib.sh
V=/tmp/v12_variants; mkdir -p $V
SRC=examples/matmul/hopper_v12.mcpl
with_consts $SRC $V/v12_bn128.mcpl '{"bn": 128}'
with_consts $SRC $V/v12_bm256_bn128.mcpl '{"bm": 256, "bn": 128}'
with_consts $SRC $V/v12_group4.mcpl '{"group": 4}'
with_consts $SRC $V/v12_group16.mcpl '{"group": 16}'
with_consts $SRC $V/v12_bn128_group16.mcpl '{"bn": 128, "group": 16}'
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "$SRC specialize" \
    "$V/v12_bn128.mcpl specialize" "$V/v12_bm256_bn128.mcpl specialize" \
    "$V/v12_group4.mcpl specialize" "$V/v12_group16.mcpl specialize" \
    "$V/v12_bn128_group16.mcpl specialize"
done
# where the warps of v12 and of its two-blocks form stall (ncu at 4096^3, each launched
# once through the CUDA driver), as ncu_stalls does for the examples
ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__inst_issued.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active'
for f in $SRC $V/v12_bn128.mcpl; do
  timeout 120 "$ncu" --metrics "$metrics" -k regex:matmul --launch-count 1 \
    python3 benchmarks/opencl/ncu_matmul.py "$f" > "$OUT/stalls_$(basename $f .mcpl).txt" 2>&1
done
grep -h -E "stalled_(barrier|dispatch|long|short|math|not_sel|wait|mio)|inst_issued|inst_executed|warps_active" \
  "$OUT"/stalls_*.txt | awk '{print $1, $NF}'
