#!/usr/bin/env bash
# The fidelity figures of matmul hopper_v12 (GPU machine), to add to the record
# (benchmarks/results/fidelity/raw/): the NVIDIA compiler's resources of the case,
# matmul's versions timed cold twice and warm once (the rows of v11 are added), and
# ncu's counters of v11's PTX (as ncu10.csv with launch10.log).
OUT=${OUT:-fidelity-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
echo matmul/hopper_v12 > /tmp/names.txt
timeout 120 python3 benchmarks/fidelity/measure.py resources --out "$OUT" --names /tmp/names.txt 2>&1 | tail -3
for t in times rerun_times; do
  timeout 120 python3 benchmarks/fidelity/measure.py time --cold --out "$OUT/$t" --kernels matmul 2>&1 | tail -2
done
timeout 120 python3 benchmarks/fidelity/measure.py time --out "$OUT/warm_times" --kernels matmul 2>&1 | tail -2
METRICS=$(grep -o '^METRICS=.*' benchmarks/fidelity/run_gpu.sh | cut -d= -f2)
timeout 150 ncu --csv --page raw --target-processes all --metrics "$METRICS" --log-file "$OUT/ncu10.csv" \
  python3 benchmarks/fidelity/measure.py launch --out "$OUT" --only matmul/hopper_v12 2>&1 | tail -5 | tee "$OUT/launch10.log"
ls -la "$OUT" "$OUT"/*/
