#!/usr/bin/env bash
# The held-out kernels (benchmarks/fidelity/heldout_kernels/) on the GPU machine, results
# under $OUT: resources.json (the NVIDIA compiler's registers, CUDA's resident blocks),
# times.json (verified, cold launches), ncu.csv with launch.log (their PTX launched through
# the CUDA driver), feedback/ (mcl feedback with the NVIDIA compiler present).
# Compared by: python3 benchmarks/fidelity/heldout.py OUT/resources.json --md OUT/TABLE.md
OUT=${OUT:-heldout-out}; mkdir -p "$OUT/feedback"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
METRICS=dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sectors_srcunit_tex_op_write.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum,l1tex__t_requests_pipe_lsu_mem_global_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,sm__warps_active.avg.pct_of_peak_sustained_active,gpu__time_duration.sum,launch__registers_per_thread
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.csv"
[ "${T_RES:-120}" = 0 ] || timeout ${T_RES:-120} python3 benchmarks/fidelity/measure.py resources --heldout --out "$OUT" > "$OUT/resources.log" 2>&1
timeout 150 python3 benchmarks/fidelity/measure.py time --heldout --cold --out "$OUT" > "$OUT/times.log" 2>&1
timeout 200 ncu --csv --page raw --target-processes all --metrics "$METRICS" --log-file "$OUT/ncu.csv" \
  python3 benchmarks/fidelity/measure.py launch --heldout --out "$OUT" > "$OUT/launch.log" 2>&1
for f in benchmarks/fidelity/heldout_kernels/*/hopper.mcpl; do
  k=$(basename "$(dirname "$f")")
  timeout 60 python3 -m mcl.cli feedback --color never "$f" > "$OUT/feedback/$k.txt" 2>&1
done
tar czf "$OUT/feedback.tgz" -C "$OUT" feedback && rm -r "$OUT/feedback"
for f in "$OUT"/*.log; do tail -n 3 "$f"; done
