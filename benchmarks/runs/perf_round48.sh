#!/usr/bin/env bash
# Issue-20 round 48 (GPU machine): hopper_v12 with its fragments as float4 values whose
# components feed the multiply-adds (matmul_hand/v11_v12_variants.py: h12_frag4) beside v12
# and cuBLAS SGEMM, 4096^3 twice and 2048^3 once; and which macros NVIDIA's OpenCL
# compiler predefines (for telling its builds apart in the source).
. benchmarks/runs/matmul_lib.sh
make_hand_variants
for size in 4096 2048 4096; do
  time_variants $size "$OUT/run$size-$RANDOM" "examples/matmul/hopper_v12.mcpl specialize" \
    "$(hand h12_frag4 $size)" --tile 128x256
done
python3 - <<'PY' | tee "$OUT/nv_macros.txt"
import pyopencl as cl
plat = [p for p in cl.get_platforms() if "NVIDIA" in p.name][0]
ctx = cl.Context([plat.get_devices()[0]])
for macro in ("__NV_CL_C_VERSION", "__NVIDIA__", "NVIDIA", "__CUDA_ARCH__", "__PTX__",
              "__OPENCL_VERSION__", "__nvvm__", "__NVPTX__", "__nvptx__", "__nvptx64__"):
    src = f"#ifndef {macro}\n#error undefined\n#endif\n__kernel void f(__global int* a) {{ a[0] = 1; }}"
    try:
        cl.Program(ctx, src).build()
        print(macro, "defined")
    except cl.RuntimeError:
        print(macro, "undefined")
PY
