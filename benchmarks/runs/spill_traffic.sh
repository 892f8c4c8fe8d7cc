#!/usr/bin/env bash
# The GPU machine: what the local memory of the sweep variants that spill costs (the
# compiler's spills: gesummv hopper_v2 with 32 warps, 4 rows, 2 rows unrolled 16 times;
# reduction hopper_v3 unrolled 16 times; each beside its version that does not spill):
# their SASS (sass_of.sh: the local loads and stores, in the loop or not) and ncu's local
# memory instructions and sectors, the L1's hits on them, the L2's and DRAM's bytes and
# the duration, of the same PTX launched once through the CUDA driver (measure.py launch).
#     OUT=DIR bash benchmarks/runs/spill_traffic.sh
set -u
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
NAMES=benchmarks/runs/spill_traffic.txt
OUT=$OUT bash benchmarks/runs/sass_of.sh $NAMES
. benchmarks/gpu_setup.sh >/dev/null 2>&1
M=gpu__time_duration.sum,smsp__inst_executed.sum
for m in smsp__inst_executed_op_local_ld.sum smsp__inst_executed_op_local_st.sum \
         l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum \
         l1tex__t_sectors_pipe_lsu_mem_local_op_ld_lookup_hit.sum \
         l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum \
         lts__t_sectors_srcunit_tex_op_read.sum lts__t_sectors_srcunit_tex_op_write.sum \
         dram__bytes_read.sum dram__bytes_write.sum sm__warps_active.avg.pct_of_peak_sustained_active \
         smsp__issue_active.avg.pct_of_peak_sustained_active; do M="$M,$m"; done
timeout ${T_NCU:-400} ncu --csv --page raw --target-processes all --metrics "$M" \
  --log-file "$OUT/ncu_spills.csv" python3 benchmarks/fidelity/measure.py launch \
  --out "$OUT" --only "$(paste -sd, $NAMES)" 2>&1 | tail -9 | tee "$OUT/launch.log"
for f in "$OUT"/sass/*.sass.txt; do
  echo "$(basename "$f" .sass.txt): LDL $(grep -c ' LDL' "$f"), STL $(grep -c ' STL' "$f")," \
       "instructions $(grep -cP '^\s+/\*[0-9a-f]{4}\*/' "$f")"
done > "$OUT/local_counts.txt"
cd "$OUT" && tar czf sass.tgz sass && rm -rf sass
ls -la
