#!/usr/bin/env bash
# GPU machine, 2026-12-02 session: the README's commands as a user runs them on the
# NVIDIA GPU (the CPU walkthrough ran on PoCL), each with its exit status, and the bad
# input fixed in this session on NVIDIA's driver. Outputs in $OUT/*.txt.
OUT=${OUT:-check-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
nvidia-smi --query-gpu=name,driver_version --format=csv > "$OUT/device.csv"
mkdir -p /tmp/out
step() {   # step NAME SECONDS COMMAND...: run, keep the last lines and the exit status
  local name=$1 t=$2; shift 2
  echo "=== $name: $*" >> "$OUT/readme.txt"
  timeout "$t" "$@" > /tmp/step.txt 2>&1; local rc=$?
  tail -25 /tmp/step.txt >> "$OUT/readme.txt"
  echo "=== $name: exit $rc" | tee -a "$OUT/readme.txt"
}
step devices 60 python3 -m mcl devices
step feedback_gpu 60 python3 -m mcl feedback examples/matmul/gpu.mcpl
step feedback_v12 90 python3 -m mcl feedback --only occupancy,time examples/matmul/hopper_v12.mcpl
step feedback_h200 60 python3 -m mcl feedback --level h200 examples/gesummv/hopper_v2.mcpl --only time
step run_vadd 90 python3 -m mcl run --target hopper examples/vector_add/perfect.mcpl --set n=100000
step run_vadd_exp 90 python3 -m mcl run --target hopper examples/vector_add/perfect.mcpl --set n=1e5
step run_bs_fast 90 python3 -m mcl run --fast-math examples/black_scholes/hopper_v2.mcpl
step run_gesummv_cold 90 python3 -m mcl run --cold examples/gesummv/hopper_v2.mcpl
step run_v7_maxreg 120 python3 -m mcl run --max-registers 128 examples/matmul/hopper_v7.mcpl
step gen_host 60 python3 -m mcl gen --host c --max-registers 128 examples/matmul/hopper_v7.mcpl -o /tmp/out/
step lift_sum 200 python3 -m mcl lift explore mcl/lift/programs/sum.lift --size N=1048576 --budget 20
step lift_gesummv 240 python3 -m mcl lift explore examples/gesummv/perfect.mcpl --target hopper --budget 10
step versions 240 python3 -m mcl versions examples/vector_add --report /tmp/out/versions
step skel_saxpy 120 python3 examples/skel/saxpy.py
step skel_explain 120 python3 -m mcl skel explain examples/skel/saxpy.py
step api 240 python3 - <<'PY'
import numpy as np, mcl
checked = mcl.check("examples/matmul/gpu.mcpl")
print(len(mcl.feedback(checked, values={"n": 4096})), "diagnostics")
lower = mcl.translate(checked.module, to="hopper")
k = mcl.compile("examples/matmul/hopper_v3.mcpl")
a, b = np.random.rand(2, 512, 512).astype(np.float32)
c = k(n=512, m=512, p=512, a=a, b=b)["c"]
print("max error", float(np.abs(c - a @ b).max()))
PY
