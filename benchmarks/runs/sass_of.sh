#!/usr/bin/env bash
# The GPU machine: PTX, ptxas -v and SASS of the recorded kernels a file names (one case a
# line; held-out kernels as heldout/NAME/hopper), as `mcl run` builds them: measure.py resources --names --ptx-dir (the NVIDIA
# OpenCL driver's PTX, its registers through the CUDA driver: $OUT/resources.json), then
# each PTX, made launchable as ptx_driver.for_cuda makes it and without the binary's
# closing NUL (which the CUDA driver takes and ptxas does not), through ptxas -v
# -arch=sm_90 with its build's register limit and cuobjdump -sass: $OUT/sass/CASE.ptx,
# .ptxas.txt and .sass.txt, and $OUT/ptx_list.txt (each case's file stem and limit).
#     OUT=DIR bash benchmarks/runs/sass_of.sh NAMES_FILE
set -u
NAMES=$1
OUT=${OUT:-perf-out}; mkdir -p "$OUT/sass"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/fidelity/measure.py resources --names "$NAMES" \
  --ptx-dir "$OUT/sass" --out "$OUT" > "$OUT/resources.log" 2>&1
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
done < ../ptx_list.txt
