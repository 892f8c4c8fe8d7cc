#!/usr/bin/env bash
# The fidelity harness's example figures on the GPU machine as it is now (an NVIDIA
# H200: the H100's chip, compute capability 9.0, with 4.8 TB/s HBM3e and a larger
# L2), kept apart from the H100's record (tests/analyses/fidelity/vendor.json): the
# NVIDIA compiler's resources and CUDA's occupancy of every example (no sweep), the
# examples timed cold, and ncu's counters of their PTX with, besides run_gpu.sh's, the
# shared-memory carveout the driver chose for each launch (the first-level cache keeps
# the rest of the 256 kB) and the sectors asynchronous copies (LDGSTS) read.
#   bash benchmarks/runs/fidelity_h200.sh      (results under $OUT)
#   T_RES=0 T_TIME=0 N=2 ONLY=a/v1,b/v2 bash ...: ncu alone, for these cases, as ncu$N.csv
# (the first run's ncu reached matmul/accelerator in its time; the rest ran so with N=2)
set -u
OUT=${OUT:-fidelity-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv > "$OUT/device.csv"
cat "$OUT/device.csv"
[ "${T_RES:-130}" = 0 ] || timeout ${T_RES:-130} python3 benchmarks/fidelity/measure.py resources --out "$OUT" --sweep 0 2>&1 | tail -4
[ "${T_TIME:-150}" = 0 ] || timeout ${T_TIME:-150} python3 benchmarks/fidelity/measure.py time --cold --out "$OUT" 2>&1 | tail -4
METRICS=$(grep -o '^METRICS=.*' benchmarks/fidelity/run_gpu.sh | cut -d= -f2)
EXTRA=launch__shared_mem_config_size
known=$(ncu --query-metrics --chip gh100 2>/dev/null)
for m in l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum lts__t_sectors_srcunit_tex.sum \
         l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum \
         lts__t_sectors_srcunit_ltcfabric.sum lts__t_sectors_op_read.sum; do
  echo "$known" | grep -qw "${m%.*}" && EXTRA="$EXTRA,$m" || echo "ncu has no $m"
done
timeout ${T_NCU:-230} ncu --csv --page raw --target-processes all --metrics "$METRICS,$EXTRA" \
  --log-file "$OUT/ncu${N:-}.csv" python3 benchmarks/fidelity/measure.py launch --out "$OUT" \
  ${ONLY:+--only "$ONLY"} 2>&1 | tail -8 | tee "$OUT/launch${N:-}.log"
ls -la "$OUT"
