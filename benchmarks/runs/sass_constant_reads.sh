#!/usr/bin/env bash
# The GPU machine: how NVIDIA's OpenCL driver reads a filter in __constant memory whose
# index depends only on completely unrolled loops (convolution nvidia_v1, hopper_v1,
# hopper_v2: mcl.analyses.timing_counts._constant_operand counts no load for it): their
# PTX's constant and global loads, and the SASS's LDC, LDG, LDS and constant-bank operands
# (ptxas -arch=sm_90 with the build's register limit, cuobjdump -sass).
OUT=${OUT:-perf-out}; mkdir -p "$OUT/sass"
. benchmarks/gpu_setup.sh >/dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$OUT/device.txt"
python3 benchmarks/fidelity/measure.py resources --names benchmarks/runs/sass_constant_reads.txt \
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
  {
    echo "== $b (max $regs registers)"
    echo "PTX: ld.const $(grep -c 'ld\.const' "$b.ptx"), ld.global $(grep -c 'ld\.global' "$b.ptx"), ld.shared $(grep -c 'ld\.shared' "$b.ptx")"
    echo "SASS: LDC $(grep -c ' LDC' "$b.sass.txt"), LDG $(grep -c ' LDG' "$b.sass.txt"), LDS $(grep -c ' LDS' "$b.sass.txt"), FFMA $(grep -c ' FFMA' "$b.sass.txt"), FFMA with a c[0x3] operand $(grep ' FFMA' "$b.sass.txt" | grep -c 'c\[0x3\]')"
  } >> ../summary.txt
done < ../ptx_list.txt
