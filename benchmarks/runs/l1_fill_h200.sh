#!/usr/bin/env bash
# The GPU machine (H200): the sectors each SM's L1 receives from the L2 beside the
# L2's read lookups, for every example (benchmarks/fidelity/measure.py launch under
# ncu), and the request-coalescer probe (benchmarks/opencl/coalescer_probe.py) at one
# and two groups per SM. N=2 ONLY=a/v1,b/v2: the launches of these cases alone, as
# ncu_fill2.csv with launch_fill2.log (T_PROBE=0 leaves the probe out).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
M=gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum
M=$M,l1tex__m_xbar2l1tex_read_sectors.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,dram__bytes_read.sum
[ "${T_PROBE:-120}" = 0 ] || timeout ${T_PROBE:-120} ncu --csv --page raw --metrics "$M" --log-file "$OUT/probe_ncu.csv" \
  python3 benchmarks/opencl/coalescer_probe.py --groups 132 264 --out "$OUT/probe.json" 2>&1 | tail -40
timeout ${T_NCU:-400} ncu --csv --page raw --target-processes all --metrics "$M" \
  --log-file "$OUT/ncu_fill${N:-}.csv" python3 benchmarks/fidelity/measure.py launch --out "$OUT" \
  ${ONLY:+--only "$ONLY"} 2>&1 | tee "$OUT/launch_fill${N:-}.log" | tail -8
ls -la "$OUT"
