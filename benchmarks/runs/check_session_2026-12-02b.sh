#!/usr/bin/env bash
# GPU machine, 2026-12-02 session, second batch: what the first (check_session_2026-12-02.sh)
# found, mended: no pyopencl CompilerWarning in the output; mcl versions predicting each
# version at h200, the level that describes the device; lift explore's roofline of h200.
# And every example kernel's versions verified and timed on the H200 beside the feedback's
# predicted time at h200 (mcl versions, each version's best of 10 warm launches).
OUT=${OUT:-check-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.csv"
step() {   # step NAME SECONDS COMMAND...: run, keep the last lines and the exit status
  local name=$1 t=$2; shift 2
  echo "=== $name: $*" >> "$OUT/readme.txt"
  timeout "$t" "$@" > /tmp/step.txt 2>&1; local rc=$?
  tail -${KEEP:-25} /tmp/step.txt >> "$OUT/readme.txt"
  grep -c CompilerWarning /tmp/step.txt | sed "s/^/=== $name: CompilerWarning lines: /" >> "$OUT/readme.txt"
  echo "=== $name: exit $rc" | tee -a "$OUT/readme.txt"
}
step devices 60 python3 -m mcl devices
step feedback_v12 90 python3 -m mcl feedback --only occupancy examples/matmul/hopper_v12.mcpl
step run_vadd 90 python3 -m mcl run --target hopper examples/vector_add/perfect.mcpl --set n=100000
step lift_gesummv 240 python3 -m mcl lift explore examples/gesummv/perfect.mcpl --target hopper --budget 6
for k in vector_add black_scholes gesummv convolution histogram reduction spmv_csr matmul; do
  KEEP=60 step "versions_$k" 400 python3 -m mcl versions examples/$k -q
done
