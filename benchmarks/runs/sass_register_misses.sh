#!/usr/bin/env bash
# The GPU machine: PTX, ptxas -v and SASS of the recorded kernels whose register estimate
# misses the compiler's count by more than 10% (benchmarks/fidelity/registers_fit.py
# --misses, 2026-11-29) and four it meets, named in sass_register_misses.txt:
# measure.py resources --names --ptx-dir (the NVIDIA OpenCL driver's PTX of the build mcl
# run makes, its registers through the CUDA driver), then ptxas -v -arch=sm_90 with the
# build's register limit and cuobjdump -sass of each.
OUT=${OUT:-perf-out}; mkdir -p "$OUT/sass"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/fidelity/measure.py resources --names benchmarks/runs/sass_register_misses.txt \
  --ptx-dir "$OUT/sass" --out "$OUT" > "$OUT/resources.log" 2>&1
cd "$OUT/sass"
for f in *.ptx; do
  b=${f%.ptx}
  # the OpenCL launch state as ptx_driver.for_cuda sets it; the binary's closing NUL,
  # which the CUDA driver takes and ptxas does not, dropped
  tr -d '\000' < "$f" | sed "s/%envreg[0-9]*/0/g" > "$b.tmp" && mv "$b.tmp" "$f"
  regs=$(python3 -c "import json,sys; r=[x for x in json.load(open('../resources.json'))['rows'] if x['name'].replace('/','__').replace('[','.').replace(']','').replace('=','-').replace(',','.')=='$b']; print(r[0].get('max_registers','') if r else '')")
  ptxas -v -arch=sm_90 ${regs:+-maxrregcount=$regs} -o "$b.cubin" "$f" > "$b.ptxas.txt" 2>&1
  cuobjdump -sass "$b.cubin" > "$b.sass.txt" 2>&1
  rm -f "$b.cubin"
  echo "$b max=$regs $(grep -o 'Used [0-9]* registers' "$b.ptxas.txt")" >> ../summary.txt
done
cd .. && tar czf sass.tgz sass && rm -rf sass
