#!/usr/bin/env bash
# Issue-20 round 20 (GPU machine): the generated hopper_v10 (h_base) with its
# fragments used as float4 components in the multiply-adds (h_vecfrag), as Lift's
# kernel does, against Lift's kernel and cuBLAS; ncu's stall reasons of h_vecfrag.
OUT=${OUT:-perf-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
python3 benchmarks/opencl/matmul_hand/v10_variants.py /tmp/v10v
H=benchmarks/opencl/matmul_hand
timeout 100 python3 benchmarks/opencl/matmul_variants.py /tmp/v10v/h_base.cl /tmp/v10v/h_vecfrag.cl \
  --size 4096 --out "$OUT" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
timeout 60 python3 benchmarks/opencl/matmul_variants.py $H/lift_best_4096.cl --local 16x16 \
  --size 4096 --out "$OUT/lift" 2>&1 | grep -v Warn | grep -v "^  " | cut -c1-90
python3 -c "
import json
d=json.load(open('$OUT/matmul_variants_4096.json'))
for k,v in d['variants'].items(): print(k, v.get('ptxas','')[-100:-40])"
timeout 200 ncu --set full -k regex:matmul -c 1 -o "$OUT/vecfrag" python3 benchmarks/opencl/ncu_matmul.py /tmp/v10v/h_vecfrag.cl:32x8 > "$OUT/vecfrag.log" 2>&1
ncu --import "$OUT/vecfrag.ncu-rep" --page raw --csv > "$OUT/vecfrag.csv" 2>&1; rm -f "$OUT/vecfrag.ncu-rep"
python3 - "$OUT/vecfrag.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
for h, v in zip(rows[0], rows[2]):
    if "issue_stalled" in h and "per_issue_active" in h or "issue_active.avg.pct" in h:
        try:
            if float(v.replace(",", "")) > 0.05: print(h, v)
        except ValueError: pass
PY
