#!/usr/bin/env bash
# The GPU machine: the SASS of convolution's MCPL versions and Lift's register-blocked
# candidates (benchmarks/lift/conv_sass.py), then Lift's candidates timed beside the MCPL
# versions (conv_candidates.py, 12 choices of each blocking rule).
# Results: $OUT/conv_sass/, $OUT/lift_conv/, the logs $OUT/*.log.
#     OUT=DIR bash benchmarks/runs/lift_conv_sass.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
timeout 200 python3 benchmarks/lift/conv_sass.py --out "$OUT/conv_sass" 2> "$OUT/conv_sass.log"
timeout 330 python3 benchmarks/lift/conv_candidates.py --choices 12 --out "$OUT/lift_conv" \
  2>&1 | grep -v -e CompilerWarning -e "lambda: self._prg" > "$OUT/lift_conv.log"
# the SASS files as one archive (the GPU machine hands back few files)
tar czf "$OUT/conv_sass/sass.tgz" -C "$OUT/conv_sass" sass && rm -r "$OUT/conv_sass/sass"
cat "$OUT/conv_sass/conv_sass.md"
grep -B2 -A40 "^| implementation" "$OUT/lift_conv.log" | grep -v "^Best Lift expression"
