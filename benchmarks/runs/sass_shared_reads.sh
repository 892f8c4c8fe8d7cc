#!/usr/bin/env bash
# The GPU machine: SASS of the shared-memory reads of matmul gpu_v3/hopper/gpu_v2 and convolution
# nvidia_v1 (measure.py launch-one --ptx-dir; ptxas -arch=sm_90; cuobjdump -sass): how wide the
# compiler reads l_a[ei][k] in a loop over k it unrolls at run time.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
mkdir -p $OUT/ptx
for c in matmul/gpu_v3 matmul/hopper matmul/gpu_v2 convolution/nvidia_v1; do
  timeout 60 python3 benchmarks/fidelity/measure.py launch-one --only $c --ptx-dir $OUT/ptx > /dev/null 2>&1
done
cd $OUT/ptx && for f in *.ptx; do
  sed "s/%envreg[0-9]*/0/g" $f > ${f%.ptx}.cuda.ptx  # the OpenCL launch state, as ptx_driver.for_cuda
  ptxas -v -arch=sm_90 -o ${f%.ptx}.cubin ${f%.ptx}.cuda.ptx 2>&1 | tail -1
  cuobjdump -sass ${f%.ptx}.cubin | grep -E "LDS|LDG|BAR|BRA" > ${f%.ptx}.sass.txt
  echo "== $f"; grep -c "LDS" ${f%.ptx}.sass.txt; grep -o "LDS[.A-Z0-9]*" ${f%.ptx}.sass.txt | sort | uniq -c
done
