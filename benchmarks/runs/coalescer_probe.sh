#!/usr/bin/env bash
# The GPU machine: do blocks on different SMs that read the same sectors at the same
# time share the L2's reads? benchmarks/opencl/coalescer_probe.py under ncu (one wave of
# groups streaming regions that s of them share, adjacent, spread or skewed), then
# matmul hopper_v10 and hopper_v11 at 2048^3 with 1, 8 and 16 block rows per group.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
known=$(ncu --query-metrics --chip gh100 2>/dev/null)
echo "$known" | grep -i -E "^(lrc|lts__t_requests|l1tex__m_)" | cut -c1-160 > "$OUT/metrics_known.txt"
M=gpu__time_duration.sum,dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum
M=$M,lts__t_requests_srcunit_tex_op_read.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum
M=$M,l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_hit.sum,lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum
for m in l1tex__m_xbar2l1tex_read_sectors.sum l1tex__m_l1tex2xbar_req.sum lrc__t_sectors.sum \
         lrc__t_requests.sum lrc__t_sectors_srcunit_tex_op_read.sum lrc__t_requests_srcunit_tex_op_read.sum \
         lts__t_sectors_srcunit_lrc.sum lts__t_sectors_srcunit_ltcfabric.sum; do
  echo "$known" | grep -qw "${m%.*}" && M="$M,$m" || echo "ncu has no $m"
done
timeout 200 ncu --csv --page raw --metrics "$M" --log-file "$OUT/probe_ncu.csv" \
  python3 benchmarks/opencl/coalescer_probe.py --groups 132 264 --out "$OUT/probe.json" 2>&1 | tail -40
V=/tmp/mm; mkdir -p $V
for g in 1 16; do
  for v in 10 11; do
    sed "s/const int group = 8; /const int group = $g; /" examples/matmul/hopper_v$v.mcpl > $V/v${v}_g$g.mcpl
  done
done
timeout 200 ncu --csv --page raw --metrics "$M" --log-file "$OUT/matmul_ncu.csv" \
  python3 benchmarks/opencl/ncu_matmul.py --size 2048 examples/matmul/hopper_v10.mcpl \
  examples/matmul/hopper_v11.mcpl $V/*.mcpl 2>&1 | tail -12
grep -c "" $V/*.mcpl >/dev/null; grep -n "const int group" $V/*.mcpl
