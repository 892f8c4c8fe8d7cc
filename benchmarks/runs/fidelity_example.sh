#!/usr/bin/env bash
# The fidelity figures of one example version (GPU machine), to add to the record
# (benchmarks/results/fidelity/raw/): the NVIDIA compiler's resources of the case, its
# kernel's versions timed cold twice and warm once in one run (all of that kernel's
# rows are replaced, so that they rank as measured together), and ncu's counters of the
# version's PTX (as ncuN.csv with launchN.log, N the next free number). Then merge the
# rows into the record with `benchmarks/fidelity/merge.py $OUT` and run
# `benchmarks/fidelity/report.py --reuse`.
#
#   bash benchmarks/runs/fidelity_example.sh matmul/hopper_v12 10
#
# (matmul hopper_v11's figures were taken so with N = 9, hopper_v12's with N = 10.)
set -u
NAME=$1; N=$2; KERNEL=${NAME%%/*}
OUT=${OUT:-fidelity-out}; mkdir -p "$OUT"
. benchmarks/gpu_setup.sh
echo "$NAME" > /tmp/names.txt
timeout 120 python3 benchmarks/fidelity/measure.py resources --out "$OUT" --names /tmp/names.txt 2>&1 | tail -3
for t in times rerun_times; do
  timeout 120 python3 benchmarks/fidelity/measure.py time --cold --out "$OUT/$t" --kernels "$KERNEL" 2>&1 | tail -2
done
timeout 120 python3 benchmarks/fidelity/measure.py time --out "$OUT/warm_times" --kernels "$KERNEL" 2>&1 | tail -2
METRICS=$(grep -o '^METRICS=.*' benchmarks/fidelity/run_gpu.sh | cut -d= -f2)
timeout 150 ncu --csv --page raw --target-processes all --metrics "$METRICS" --log-file "$OUT/ncu$N.csv" \
  python3 benchmarks/fidelity/measure.py launch --out "$OUT" --only "$NAME" 2>&1 | tail -5 | tee "$OUT/launch$N.log"
ls -la "$OUT" "$OUT"/*/
