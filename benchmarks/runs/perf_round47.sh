#!/usr/bin/env bash
# Issue-20 round 47 (GPU machine): where the warps of matmul hopper_v12 stall, beside
# v11 and cuBLAS's kernel (Nsight Compute, stall reasons per issued instruction, and
# issue-slot use), at 4096^3.
. benchmarks/runs/matmul_lib.sh
ncu_stalls "$OUT" hopper_v11 hopper_v12
