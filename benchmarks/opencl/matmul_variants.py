"""Time OpenCL matmul kernels side by side with cuBLAS SGEMM, and show what the
NVIDIA compiler made of each (registers, spills, vector loads): for finding which
code shape the generator should emit.

Every kernel defines `matmul(n, m, p, c, a, b)` (c = a · b, row-major, n×p by p×m)
with 256 work-items per group covering a 128 × 128 tile of c, as the hopper matmul
versions do; `--tile` changes the tile for kernels that cover another one. A
`.mcpl` file is generated for `--target` first (benchmarks/opencl/matmul_hand/
holds hand-written OpenCL for comparison).

    python benchmarks/opencl/matmul_variants.py examples/matmul/hopper_v6.mcpl \
        benchmarks/opencl/matmul_hand/*.cl "benchmarks/opencl/matmul_hand/vec4.cl -DBK=16" \
        --size 4096 --out DIR

A file name followed by build options (one argument) builds the file with them;
the word `specialize` among them generates the sizes as compile-time constants, and
`local=WxH` launches that file with its own work-group shape instead of `--local`'s,
and `maxnreg=N` rebuilds it from its PTX with the directive `.maxnreg N` on the entry
(the register limit NVIDIA's OpenCL driver ignores as a build option; the figures are
then the CUDA driver's for that PTX).
`--platform` picks another OpenCL platform (PoCL to check kernels on a CPU): without
CUDA (no torch) the result is checked against numpy and there is no cuBLAS figure.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def ptx_stats(ptx: str) -> dict[str, int]:
    """Counts of the instructions that decide a matmul kernel's speed."""
    pats = {
        "fma": r"\bfma\.rn\.f32\b",
        "ld.shared.v4": r"\bld\.shared\.v4\.f32\b",
        "ld.shared.f32": r"\bld\.shared\.f32\b",
        "st.shared": r"\bst\.shared\.",
        "ld.global.v4": r"\bld\.global(\.nc)?\.v4\.f32\b",
        "ld.global.f32": r"\bld\.global(\.nc)?\.f32\b",
        "local (spill)": r"\b(ld|st)\.local\.",
        "bar.sync": r"\bbar\.sync\b",
    }
    return {k: len(re.findall(v, ptx)) for k, v in pats.items()}


def cublas(torch, a: np.ndarray, b: np.ndarray, repeats: int) -> tuple[float, np.ndarray]:
    """cuBLAS SGEMM's median time (ms) of a @ b, and its product."""
    torch.backends.cuda.matmul.allow_tf32 = False
    ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
    ref = (ta @ tb).cpu().numpy()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for r in range(repeats + 2):
        start.record()
        ta @ tb
        end.record()
        torch.cuda.synchronize()
        if r >= 2:
            times.append(start.elapsed_time(end))
    return statistics.median(times), ref


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--tile", default="128x128", help="rows x columns of c per work-group")
    ap.add_argument("--local", default="32x8", help="work-group shape")
    ap.add_argument("--target", default="hopper", help="leaf level for .mcpl files")
    ap.add_argument("--options", default="-cl-nv-verbose",
                    help="build options (a generated kernel adds its plan's NVIDIA options)")
    ap.add_argument("--platform", default="NVIDIA", help="part of the OpenCL platform's name")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import pyopencl as cl

    n = m = p = args.size
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (n, p)).astype(np.float32)
    b = rng.uniform(-1, 1, (p, m)).astype(np.float32)
    flops = 2.0 * n * m * p
    try:
        import torch
        cuda = torch.cuda.is_available()
    except ImportError:
        cuda = False
    if cuda:
        cublas_ms, ref = cublas(torch, a, b, args.repeats)
        print(f"cuBLAS SGEMM {n}^3: {cublas_ms:.3f} ms, {flops / cublas_ms * 1e-9:.0f} TFLOP/s")
    else:  # no CUDA: numpy's product, no cuBLAS figure
        cublas_ms, ref = None, a.astype(np.float64) @ b.astype(np.float64)

    plat = [pl for pl in cl.get_platforms() if args.platform in pl.name][0]
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    mf = cl.mem_flags
    da = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a)
    db = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=b)
    dc = cl.Buffer(ctx, mf.WRITE_ONLY, size=n * m * 4)
    tr, tc = (int(x) for x in args.tile.split("x"))
    lx, ly = (int(x) for x in args.local.split("x"))
    results = {"size": n, "cublas_ms": cublas_ms, "device": dev.name, "variants": {}}
    for f in args.files:
        f, *extra = f.split()
        specialize = "specialize" in extra   # the sizes as compile-time constants
        local = [o for o in extra if o.startswith("local=")]   # this file's work-group
        cap = [int(o.removeprefix("maxnreg=")) for o in extra if o.startswith("maxnreg=")]
        extra = [o for o in extra if o != "specialize" and o not in local
                 and not o.startswith("maxnreg=")]
        name = " ".join([Path(f).stem, *extra] + (["specialized"] if specialize else [])
                        + [f"maxnreg={c}" for c in cap])
        sizes_given = True
        row: dict = {}
        try:
            options = args.options.split() + extra
            gsize = ((m + tc - 1) // tc * lx, (n + tr - 1) // tr * ly)
            lsize = (lx, ly)
            if local:
                fx, fy = (int(x) for x in local[-1].removeprefix("local=").split("x"))
                gsize, lsize = (gsize[0] // lx * fx, gsize[1] // ly * fy), (fx, fy)
            if f.endswith(".mcpl"):
                from mcl.opencl import generate
                (kernel,) = generate(f, args.target, specialize=specialize)
                src = kernel.source
                # options given after the file name override the plan's of the same flag
                given = {o.split("=")[0] for o in extra}
                options += [o for o in kernel.plan.options_for(plat.name)
                            if o.split("=")[0] not in given]
                from mcl.opencl.plan import evaluate  # the plan's own grid (1-D block ids too)
                env = {"n": n, "m": m, "p": p}
                gsize = tuple(evaluate(e, env) for e in kernel.plan.global_size)
                options += [c.option(env[c.name]) for c in kernel.plan.compile_time]
                sizes_given = not kernel.plan.compile_time
                lsize = tuple(evaluate(e, env) for e in kernel.plan.local_size)
            else:
                src = Path(f).read_text()
            row["options"] = options
            prog = cl.Program(ctx, src).build(options=options)
            log = prog.get_build_info(dev, cl.program_build_info.LOG)
            row["ptxas"] = " | ".join(line.strip() for line in log.splitlines()
                                      if "ptxas" in line or "Used" in line)
            ptx = prog.binaries[0].decode(errors="replace")
            if cap:   # rebuilt from its PTX with the register limit on the entry
                from mcl.opencl import vendor
                prog = vendor.rebuild_capped(prog, ctx, cap[-1], options)
                ptx = prog.binaries[0].decode(errors="replace").rstrip("\0")
                try:
                    loaded = vendor.load(ptx.encode(), "matmul", None)
                    row["ptxas"] = (f"Used {loaded.registers} registers, "
                                    f"{loaded.local_bytes} bytes local (CUDA driver)")
                except Exception as e:  # no cuda.bindings: the OpenCL log only
                    row["ptxas"] += f" | (no CUDA driver figures: {e})"
            row["ptx"] = ptx_stats(ptx)
            k = prog.matmul
            if sizes_given:
                k.set_args(np.int32(n), np.int32(m), np.int32(p), dc, da, db)
            else:
                k.set_args(dc, da, db)
            # NaN in c first: an element the kernel leaves alone cannot pass for another's
            cl.enqueue_fill_buffer(queue, dc, np.float32(np.nan), 0, n * m * 4)
            ts = []
            for r in range(args.repeats + 2):
                ev = cl.enqueue_nd_range_kernel(queue, k, gsize, lsize)
                ev.wait()
                if r >= 2:
                    ts.append((ev.profile.end - ev.profile.start) * 1e-6)
            out = np.empty((n, m), np.float32)
            cl.enqueue_copy(queue, out, dc)
            err = float(np.max(np.abs(out - ref)) / max(1.0, float(np.max(np.abs(ref)))))
            ms = statistics.median(ts)
            of = cublas_ms / ms if cublas_ms else None
            row.update(ms=ms, tflops=flops / ms * 1e-9, of_cublas=of, rel_err=err,
                       ok=err < 1e-4, local=list(lsize))
            print(f"{name:24s} {ms:7.3f} ms {flops / ms * 1e-9:8.0f} TFLOP/s "
                  + (f"{of:6.1%} of cuBLAS" if of else "")
                  + f"  err {err:.1e}  {'ok' if err < 1e-4 else 'WRONG'}  {row['ptxas']}")
            print(f"{'':24s} {row['ptx']}")
        except Exception as e:  # an experiment reports every failure and goes on
            row["error"] = str(e)[:3000]
            print(f"{name:24s} FAILED: {str(e)[:3000]}")
        results["variants"][name] = row
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"matmul_variants_{n}.json").write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
