#!/usr/bin/env bash
# The GPU machine: PTX, ptxas -v and SASS of the recorded kernels whose register estimate
# misses the compiler's count by more than 10% (benchmarks/fidelity/registers_fit.py
# --misses, 2026-11-29) and four it meets, named in sass_register_misses.txt
# (sass_of.sh), with the registers ptxas reports for each.
OUT=${OUT:-perf-out}
OUT=$OUT bash benchmarks/runs/sass_of.sh benchmarks/runs/sass_register_misses.txt
cd "$OUT/sass"
while read -r b regs; do
  echo "$b max=$regs $(grep -o 'Used [0-9]* registers' "$b.ptxas.txt")" >> ../summary.txt
done < ../ptx_list.txt
cd .. && tar czf sass.tgz sass && rm -rf sass
