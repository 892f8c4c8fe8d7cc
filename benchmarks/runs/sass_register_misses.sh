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
# each PTX as ptx_driver.for_cuda makes it launchable (the OpenCL launch state), without the
# binary's closing NUL, which the CUDA driver takes and ptxas does not; with its build's
# register limit
python3 - "$OUT" > "$OUT/ptx_list.txt" <<'PY'
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks/fidelity")
from measure import case_file_name
from ptx_driver import for_cuda
out = Path(sys.argv[1])
for row in json.loads((out / "resources.json").read_text())["rows"]:
    f = out / "sass" / (case_file_name(row["name"]) + ".ptx")
    if f.exists():
        f.write_bytes(for_cuda(f.read_bytes()).rstrip(b"\0"))
        print(f.stem, row.get("max_registers", ""))
PY
cd "$OUT/sass"
while read -r b regs; do
  ptxas -v -arch=sm_90 ${regs:+-maxrregcount=$regs} -o "$b.cubin" "$b.ptx" > "$b.ptxas.txt" 2>&1
  cuobjdump -sass "$b.cubin" > "$b.sass.txt" 2>&1
  rm -f "$b.cubin"
  echo "$b max=$regs $(grep -o 'Used [0-9]* registers' "$b.ptxas.txt")" >> ../summary.txt
done < ../ptx_list.txt
cd .. && tar czf sass.tgz sass && rm -rf sass
