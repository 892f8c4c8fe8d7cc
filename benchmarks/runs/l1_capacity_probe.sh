#!/usr/bin/env bash
# The GPU machine: how much of a thread-per-row walk an SM's L1 keeps from one
# iteration to the next (benchmarks/opencl/l1_capacity_probe.py under ncu): global-load
# sectors and L1 hits per configuration, and the shared-memory size the driver
# configured for each (what is left of the 256 kB is the L1's). Every configuration with
# rows of 1 kB; those of one group of 1024 an SM (gesummv perfect's) also with rows of
# 16 kB (gesummv's at n = 4096) and 16.1 kB.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
M=gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read.sum
M=$M,launch__shared_mem_config_size,launch__occupancy_limit_shared_mem,launch__grid_size
M=$M,launch__block_size,sm__warps_active.avg.pct_of_peak_sustained_active
P=benchmarks/opencl/l1_capacity_probe.py
timeout ${T_PROBE:-300} ncu --csv --page raw --metrics "$M" --log-file "$OUT/l1_capacity_ncu.csv" \
  python3 $P --out "$OUT/l1_capacity.json" 2>&1 | tail -30
timeout ${T_PROBE:-300} ncu --csv --page raw --metrics "$M" --log-file "$OUT/l1_capacity_rows_ncu.csv" \
  python3 $P --row 4096 4128 --only 20 21 22 23 --out "$OUT/l1_capacity_rows.json" 2>&1 | tail -10
