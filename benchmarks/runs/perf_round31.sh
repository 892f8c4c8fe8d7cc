#!/usr/bin/env bash
# Round 31 (GPU machine): data for the time model of the memory-bound kernels and the
# read ceiling of gesummv.
#   1. benchmarks/fidelity/measure.py time --cold, twice: every version of vector_add,
#      black_scholes and gesummv (K=...: other kernels) with the sweep variants the
#      fidelity record holds (verified against reference.py, then timed);
#   2. benchmarks/opencl/stream_probe.py: the probes of round 15 and gesummv's two
#      matrices read alone, a copy of as many bytes, 1 GiB read alone (skipped with
#      PROBE=0);
#   3. gesummv with each row split over the warps of a block
#      (benchmarks/runs/gesummv_split.mcpl) over split x unroll x warps, beside
#      gpu_v1 and hopper_v2, in the case study (median of its launches, the copy
#      ceiling measured in the same run).
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
K=${K:-"vector_add black_scholes gesummv"}
for run in 1 2; do
  timeout ${T_TIME:-150} python3 benchmarks/fidelity/measure.py time --cold --kernels $K --timed-sweep $K \
    --out "$OUT" 2>&1 | tail -3
  mv "$OUT/times.json" "$OUT/sweep_times_$run.json"
done
[ "${PROBE:-1}" = 0 ] || timeout 120 python3 benchmarks/opencl/stream_probe.py --out "$OUT" 2>&1 | tail -16
[ "${SPLIT:-1}" = 0 ] && exit 0
V=/tmp/var31; mkdir -p $V
for s in 1 2 4 8; do for u in 1 2 4 8; do for w in 8 16; do
  sed "s/const int split = 4;/const int split = $s;/; s/const int unroll = 2;/const int unroll = $u;/; s/const int nrWarps = 8;/const int nrWarps = $w;/" \
    benchmarks/runs/gesummv_split.mcpl > $V/split_s${s}u${u}w${w}.mcpl; done; done; done
timeout 200 python3 benchmarks/case_studies/run.py --kernels gesummv --versions gpu_v1,hopper_v2 \
  --extra "gesummv=$V/*.mcpl" --out "$OUT/cs" --budget-s 180 2>&1 | grep -v "^  " | tail -3
python3 benchmarks/runs/summarise.py "$OUT/cs/results.json"
