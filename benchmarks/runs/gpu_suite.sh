#!/usr/bin/env bash
# The test suite on the GPU machine, with NVIDIA's OpenCL driver as the device
# (MCL_DEVICE=NVIDIA:, set by gpu_setup.sh): every test that runs OpenCL runs it on the
# GPU instead of PoCL, and the tests that need a GPU run instead of being skipped.
# The groups run side by side (the machine's 16 cores), each with its own log under
# $OUT; summary.txt lists every group's outcome and every failing test.
# tests/lsp is left out: the language server's pygls is not carried to the GPU machine,
# and it runs no OpenCL.
# Usage (repository root, GPU machine): OUT=... [SKIP="skel"] [LIMIT=s] bash benchmarks/runs/gpu_suite.sh
# MCL_DEVICE="Portable Computing Language:" runs the same on the machine's PoCL (5.0)
# instead of NVIDIA's driver.
OUT=${OUT:-gpu-suite-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 -c "import pyopencl as cl; print([d.name for p in cl.get_platforms() for d in p.get_devices()])" \
  > "$OUT/devices.txt" 2>&1
LIMIT=${LIMIT:-520}
declare -A GROUPS_=(
  [opencl]="tests/opencl"
  [skel]="tests/skel"
  [lift]="tests/lift"
  [examples]="tests/examples tests/versions tests/translate"
  [analyses]="tests/analyses"
  [front]="tests/mcpl tests/hdl tests/compat tests/test_api.py tests/test_cli.py tests/test_diagnostics.py"
)
for g in ${SKIP:-}; do unset "GROUPS_[$g]"; done    # SKIP="skel": groups left out
for g in "${!GROUPS_[@]}"; do
  ( timeout "$LIMIT" python3 -m pytest -p no:cacheprovider -p no:warnings -q -rfE \
      ${GROUPS_[$g]} > "$OUT/$g.log" 2>&1; echo "rc=$?" >> "$OUT/$g.log" ) &
done
wait
{
  cat "$OUT/devices.txt"
  for g in "${!GROUPS_[@]}"; do
    echo "== $g (${GROUPS_[$g]}): $(grep -E '^[0-9]+ (passed|failed)|passed|failed|error' "$OUT/$g.log" | tail -1) $(tail -1 "$OUT/$g.log")"
    grep -E "^(FAILED|ERROR) " "$OUT/$g.log" | cut -c1-300
  done
} > "$OUT/summary.txt"
cat "$OUT/summary.txt"
