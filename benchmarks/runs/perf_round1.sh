#!/usr/bin/env bash
# Issue-20 exploration, round 1 (GPU machine): memory probes at the case-study sizes,
# gesummv/matmul candidates beside their predecessors and cuBLAS, and ncu's full
# section set for matmul hopper_v5 launched through the CUDA driver.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
{ lscpu; nproc; free -g; python3 -c "import pyopencl as cl; [print(p.name, d.name, d.max_compute_units) for p in cl.get_platforms() for d in p.get_devices()]"; } > "$OUT/host.txt" 2>&1
timeout 120 python3 benchmarks/opencl/stream_probe.py --out "$OUT" 2>&1 | tail -40
V=/tmp/var; mkdir -p $V
for u in 2 4 8; do for w in 4 8; do
  sed "s/const int unroll = 4;/const int unroll = $u;/; s/const int nrWarps = 8;/const int nrWarps = $w;/" \
    examples/gesummv/hopper_v2.mcpl > $V/hopper_v2u${u}w${w}.mcpl; done; done
timeout 240 python3 benchmarks/case_studies/run.py --kernels gesummv,matmul \
  --versions gpu_v1,hopper_v1,hopper_v5,hopper_v7 --extra "gesummv=$V/*.mcpl" \
  --out "$OUT/cs" --budget-s 180 2>&1 | grep -v "^  " | tail -30
python3 - "$OUT/cs/results.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for k, kr in r["kernels"].items():
    for run in kr.get("runs", []):
        refs = {x.get("name", x.get("reference")): x for x in run.get("references", [])}
        print(k, run["sizes"])
        for e in run.get("results", []):
            t = e.get("timing", {}).get("median_s")
            print(f"  {e['version']:18s} {e['status']:8s} {t*1e3 if t else float('nan'):9.4f} ms")
        for name, x in refs.items():
            print("  ref", name, x.get("timing", {}).get("median_s") or x.get("median_s"))
PY
timeout 150 ncu --set full --target-processes all -k regex:matmul -c 1 -o "$OUT/mm5" \
  python3 benchmarks/fidelity/measure.py launch-one --only matmul/hopper_v5 > "$OUT/ncu_launch.log" 2>&1
ncu --import "$OUT/mm5.ncu-rep" --page details > "$OUT/mm5_details.txt" 2>&1
rm -f "$OUT/mm5.ncu-rep"
grep -E "Duration|Throughput|Issue|Stall|Warp Cycles|Eligible|Registers|Achieved Occupancy" "$OUT/mm5_details.txt" | head -40
