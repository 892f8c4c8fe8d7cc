"""Launch hand-written or generated matmul OpenCL kernels through the CUDA driver, so
that Nsight Compute (which does not see OpenCL kernels) can profile them: each .cl is
built by NVIDIA's OpenCL compiler, its PTX loaded with the CUDA driver and launched at
n = m = p = SIZE with random inputs, checked against numpy.

    ncu --set full -k regex:matmul python benchmarks/opencl/ncu_matmul.py \\
        benchmarks/opencl/matmul_hand/lift_best_4096.cl:16x16 h_base.cl:32x8 \\
        examples/matmul/hopper_v11.mcpl

Every .cl kernel takes (n, m, p, c, a, b) as matmul_variants.py's do and covers
128 × 128 of c per work-group; a .mcpl version is generated for hopper with its sizes
as compile-time constants, built with its plan's options for the platform and
launched on its plan's grid. Exits 2 without an NVIDIA
OpenCL device.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernels", nargs="+", metavar="FILE.cl:LXxLY")
    ap.add_argument("--size", type=int, default=4096)
    args = ap.parse_args()
    import pyopencl as cl

    plats = [p for p in cl.get_platforms() if "NVIDIA" in p.name]
    if not plats:
        print("ncu_matmul: no NVIDIA OpenCL device", file=sys.stderr)
        return 2
    import ptx_driver as cu

    from mcl.opencl.vendor import load
    ctx = cl.Context([plats[0].get_devices()[0]])
    n = args.size
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    want = a @ b
    for spec in args.kernels:
        path, _, shape = spec.partition(":")
        lx, ly = (int(x) for x in (shape or "32x8").split("x"))
        grid = (n // 128, n // 128)
        sizes = [(n, "int32"), (n, "int32"), (n, "int32")]
        if path.endswith(".mcpl"):
            from mcl.opencl import generate
            from mcl.opencl.plan import evaluate
            (kernel,) = generate(path, "hopper", specialize=True)
            env = {"n": n, "m": n, "p": n}
            glob = [evaluate(e, env) for e in kernel.plan.global_size]
            lx, ly = (evaluate(e, env) for e in kernel.plan.local_size)
            grid = (glob[0] // lx, glob[1] // ly)
            prog = cl.Program(ctx, kernel.source).build(
                options=[*kernel.plan.options_for(plats[0].name),
                         *(c.option(env[c.name]) for c in kernel.plan.compile_time)])
            sizes = [s for s, name in zip(sizes, "nmp", strict=True)
                     if name not in {c.name for c in kernel.plan.compile_time}]
        else:
            prog = cl.Program(ctx, Path(path).read_text()).build()
        loaded = load(cu.for_cuda(prog.binaries[0]), "matmul", None)
        mem = cu.DeviceArrays()
        da, db, dc = mem.upload(a), mem.upload(b), mem.zeros(4 * n * n)
        argv = [*sizes, (dc, None), (da, None), (db, None)]
        times = [cu.launch(loaded, grid, (lx, ly), argv) for _ in range(3)]
        got = mem.download(dc, want)
        err = float(np.max(np.abs(got - want)))
        print(f"{Path(path).name}: {min(times) * 1e3:.3f} ms, registers {loaded.registers}, "
              f"max error {err:.1e}", flush=True)
        mem.free()
        loaded.unload()
    return 0


if __name__ == "__main__":
    sys.exit(main())
