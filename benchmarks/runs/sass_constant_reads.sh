#!/usr/bin/env bash
# The GPU machine: how NVIDIA's OpenCL driver reads a filter in __constant memory whose
# index depends only on completely unrolled loops (convolution nvidia_v1, hopper_v1,
# hopper_v2: mcl.analyses.timing_counts._uniform_unrolled): their PTX's constant, global
# and shared loads, and the SASS's LDC, LDG, LDS, multiply-adds and constant-bank
# operands of those (sass_of.sh).
OUT=${OUT:-perf-out}
OUT=$OUT bash benchmarks/runs/sass_of.sh benchmarks/runs/sass_constant_reads.txt
cd "$OUT/sass"
while read -r b regs; do
  {
    echo "== $b (max $regs registers)"
    echo "PTX: ld.const $(grep -c 'ld\.const' "$b.ptx"), ld.global $(grep -c 'ld\.global' "$b.ptx"), ld.shared $(grep -c 'ld\.shared' "$b.ptx")"
    echo "SASS: LDC $(grep -c ' LDC' "$b.sass.txt"), LDG $(grep -c ' LDG' "$b.sass.txt"), LDS $(grep -c ' LDS' "$b.sass.txt"), FFMA $(grep -c ' FFMA' "$b.sass.txt"), FFMA with a c[0x3] operand $(grep ' FFMA' "$b.sass.txt" | grep -c 'c\[0x3\]')"
  } >> ../summary.txt
done < ../ptx_list.txt
