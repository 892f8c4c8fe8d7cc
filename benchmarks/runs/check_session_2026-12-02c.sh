#!/usr/bin/env bash
# GPU machine, 2026-12-02 session, third batch: what this session changed, on the NVIDIA
# driver: mcl versions timing cold launches by default (vector_add, gesummv: predicted at
# h200 beside the measured cold time); a build failure of a user's function (skel) in
# words; Lift type-checking a program before it explores it; the runtime's checks of
# scalar arguments (tests/opencl/test_runtime.py on the GPU).
OUT=${OUT:-check-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.csv"
step() {   # step NAME SECONDS COMMAND...: run, keep the last lines and the exit status
  local name=$1 t=$2; shift 2
  echo "=== $name: $*" >> "$OUT/readme.txt"
  timeout "$t" "$@" > /tmp/step.txt 2>&1; local rc=$?
  tail -${KEEP:-25} /tmp/step.txt >> "$OUT/readme.txt"
  echo "=== $name: exit $rc" | tee -a "$OUT/readme.txt"
}
# PART=a: the versions; PART=b: the rest (each under the 10 minutes of a GPU call)
if [ "${PART:-a}" = a ]; then
for k in vector_add gesummv black_scholes; do
  KEEP=30 step "versions_$k" 300 python3 -m mcl versions examples/$k -q
done
KEEP=12 step versions_warm 200 python3 -m mcl versions examples/vector_add -q --warm
exit 0
fi
cat > /tmp/skel_bad.py <<'PY'
import numpy as np, mcl.skel as sk
m = sk.Map("float f(float x) { return x * ; }")
m(sk.Vector(np.arange(4, dtype=np.float32)))
PY
step skel_build_error 120 python3 /tmp/skel_bad.py
step lift_gesummv 240 python3 -m mcl lift explore examples/gesummv/perfect.mcpl --target hopper --budget 6
step runtime_tests 300 python3 -m pytest -p no:cacheprovider -p no:warnings -q tests/opencl/test_runtime.py
# the Gaussian blur's function reads its neighbours through a loop offset, so each call
# now reads its beyond-reach flags back: its time against the hand-written kernel
KEEP=40 step skel_blur_heat 400 python3 benchmarks/skel/run.py --out "$OUT/skel" --only gaussian_blur heat
