#!/usr/bin/env bash
# The whole fidelity measurement on the GPU machine, results under $OUT (or ./fidelity-out):
#   resources.json  registers, shared memory, spills, CUDA occupancy of every case
#   times.json      example versions verified and timed through NVIDIA's OpenCL, each launch
#                   cold (the L2 flushed before it, as ncu does; WARM=1: also back to back,
#                   warm_times.json)
#   launches.json + ncu.csv   the same PTX launched through the CUDA driver under ncu
# Usage (repository root, GPU machine): bash benchmarks/fidelity/run_gpu.sh [SWEEP]
#   T_RES / T_TIME / T_NCU: seconds for each part (0 skips it); ONLY=a/v1,b/v2: ncu for these cases
#   KERNELS="convolution ...": resources and times of these example kernels only (no sweep);
#   RERUN=1: the times twice (times.json, rerun_times.json: the run-to-run spread)
OUT=${OUT:-fidelity-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
SWEEP=${1:-400}
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread,launch__occupancy_limit_registers,launch__occupancy_limit_shared_mem,launch__occupancy_limit_warps,launch__occupancy_limit_blocks,launch__shared_mem_per_block_static
SEL=(); [ -n "$KERNELS" ] && SEL=(--kernels $KERNELS) && SWEEP=0
[ "${T_RES:-300}" = 0 ] || timeout ${T_RES:-300} python3 benchmarks/fidelity/measure.py resources --out "$OUT" --sweep "$SWEEP" "${SEL[@]}" 2>&1 | tee "$OUT/resources.log"
if [ "${T_TIME:-150}" != 0 ] && [ -n "$RERUN" ]; then
  timeout ${T_TIME:-150} python3 benchmarks/fidelity/measure.py time --cold --out "$OUT" "${SEL[@]}" 2>&1 | tee "$OUT/rerun_times.log"
  mv "$OUT/times.json" "$OUT/rerun_times.json"
fi
if [ "${T_TIME:-150}" != 0 ] && [ -n "$WARM" ]; then
  timeout ${T_TIME:-150} python3 benchmarks/fidelity/measure.py time --out "$OUT" "${SEL[@]}" 2>&1 | tee "$OUT/warm_times.log"
  mv "$OUT/times.json" "$OUT/warm_times.json"
fi
[ "${T_TIME:-150}" = 0 ] || timeout ${T_TIME:-150} python3 benchmarks/fidelity/measure.py time --cold --out "$OUT" "${SEL[@]}" 2>&1 | tee "$OUT/times.log"
[ "${T_NCU:-150}" = 0 ] || timeout ${T_NCU:-150} ncu --csv --page raw --target-processes all --metrics "$METRICS" --log-file "$OUT/ncu.csv" \
  python3 benchmarks/fidelity/measure.py launch --out "$OUT" --ptx-dir /tmp/ptx ${ONLY:+--only "$ONLY"} 2>&1 | tail -60 | tee "$OUT/launch.log"
ls -la "$OUT"
tar czf "$OUT/ptx.tgz" -C /tmp ptx 2>/dev/null
