#!/usr/bin/env bash
# The GPU machine: why issue-bound example versions issue in 63-78% of their cycles
# (raw/h200_2026-11-30_issue), where the time model's `issue` part has them at 100%:
# their SASS (sass_of.sh) and ncu's warp-state, scheduler and instruction sections of
# the same PTX launched once through the CUDA driver as the fidelity harness launches it
# (measure.py launch). The versions: benchmarks/runs/stall_reasons.txt.
#     OUT=DIR [PAGE=raw] [SASS=0] [NAMES=FILE] bash benchmarks/runs/stall_reasons.sh
# (PAGE=raw: every metric of the sections, the stall reasons among them)
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
NAMES=${NAMES:-benchmarks/runs/stall_reasons.txt}
[ "${SASS:-1}" = 1 ] && OUT=$OUT bash benchmarks/runs/sass_of.sh $NAMES
. benchmarks/gpu_setup.sh >/dev/null 2>&1
ONLY=$(paste -sd, $NAMES)
PAGE=${PAGE:-details}
timeout ${T_NCU:-400} ncu --csv --page $PAGE --target-processes all \
  --section WarpStateStats --section SchedulerStats --section InstructionStats \
  --section Occupancy --section LaunchStats --section ComputeWorkloadAnalysis \
  --log-file "$OUT/ncu_stalls_$PAGE.csv" python3 benchmarks/fidelity/measure.py launch \
  --out "$OUT" --only "$ONLY" 2>&1 | tail -4 | tee "$OUT/launch.log"
cd "$OUT" && [ -d sass ] && tar czf sass.tgz sass && rm -rf sass
ls -la
