# Sourced by the matmul perf_round*.sh scripts (GPU machine): what each round does again.
# Sets OUT (the results' folder, perf-out unless given) and sets up the GPU machine
# (benchmarks/gpu_setup.sh).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh

# time_variants SIZE OUT FILE... [OPTION...]: benchmarks/opencl/matmul_variants.py at
# SIZE^3 with the files (each with its options, as matmul_variants.py takes them;
# --tile may follow), the median of 20 beside cuBLAS SGEMM's, results in OUT; prints a
# line per file with the NVIDIA compiler's registers, and cuBLAS's.
time_variants() {
  local size=$1 out=$2; shift 2
  timeout 200 python3 benchmarks/opencl/matmul_variants.py "$@" --size "$size" --repeats 20 \
    --out "$out" 2>&1 | grep -v -e "^ *{" -e "CompilerWarning" -e "self._prg.build" \
    | sed -e 's/ptxas info    : 0 bytes gmem.*Used/Used/' -e 's/, used 1 barriers.*//' \
          -e 's/ -DMCL_n=[0-9]* -DMCL_m=[0-9]* -DMCL_p=[0-9]*//'
}

# make_hand_variants: the hand-edited kernels of benchmarks/opencl/matmul_hand/
# v11_v12_variants.py, into /tmp/async.
make_hand_variants() { python3 benchmarks/opencl/matmul_hand/v11_v12_variants.py /tmp/async > /dev/null; }

# hand NAME SIZE: the hand-edited kernel NAME (make_hand_variants) as time_variants
# takes it: work-groups of 32 x 8, the sizes built in at SIZE.
hand() { echo "/tmp/async/$1.cl local=32x8 -DMCL_n=$2 -DMCL_m=$2 -DMCL_p=$2"; }

# with_consts SRC DST JSON: SRC with the const settings of JSON written to DST
# (benchmarks/fidelity/fidelity_cases.with_consts).
with_consts() {
  python3 - "$@" <<'PY'
import json, sys
from pathlib import Path
sys.path.insert(0, "benchmarks/fidelity")
import fidelity_cases as C
src, dst, consts = sys.argv[1:]
Path(dst).write_text(C.with_consts(Path(src).read_text(), json.loads(consts)))
PY
}

# ncu_stalls OUT VERSION...: Nsight Compute at 4096^3 on cuBLAS's SGEMM kernel and on
# examples/matmul/VERSION.mcpl (each launched once through the CUDA driver), into
# OUT/stalls_cublas.txt and OUT/stalls_VERSION.txt; then stalls_table.
ncu_stalls() {
  local out=$1; shift
  local ncu metrics v
  ncu=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  metrics='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,sm__inst_issued.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum'
  timeout 120 "$ncu" --metrics "$metrics" -k regex:gemm --launch-skip 2 --launch-count 1 \
    python3 benchmarks/opencl/cublas_sgemm.py --size 4096 > "$out/stalls_cublas.txt" 2>&1
  for v in "$@"; do
    timeout 120 "$ncu" --metrics "$metrics" -k regex:matmul --launch-count 1 \
      python3 benchmarks/opencl/ncu_matmul.py "examples/matmul/$v.mcpl" > "$out/stalls_$v.txt" 2>&1
  done
  stalls_table "$out" "$@"
}

# stalls_table OUT VERSION...: from ncu_stalls' files, stall cycles per issued
# instruction by reason, the issue slots used and the instructions: a column each,
# cuBLAS's first, the rows where some column passes 0.01.
stalls_table() {
  local out=$1 keep='stalled|inst_issued|inst_executed' v; shift
  grep -E "$keep" "$out/stalls_cublas.txt" | awk '{print $1, $NF}' > "$out/stalls.tab"
  for v in "$@"; do
    grep -E "$keep" "$out/stalls_$v.txt" | awk '{print $NF}' | paste "$out/stalls.tab" - \
      > "$out/stalls.next" && mv "$out/stalls.next" "$out/stalls.tab"
  done
  sed 's/smsp__average_warps_issue_stalled_//; s/_per_issue_active.ratio//' "$out/stalls.tab" \
    | awk '{for (i = 2; i <= NF; i++) if ($i + 0 > 0.01) {print; next}}'
  rm -f "$out/stalls.tab"
}
