"""Bisect the AllPairs zip-reduce kernel of code shape l against Lift's text: the same
matmul (AllPairs(mult, add, identity 0) at n x n x n, one device) built from shape l's
source with edits that move it toward Lift's kernel one at a time, each verified
against cuBLAS (torch) or numpy, timed in alternating blocks with cuBLAS, and its
registers as NVIDIA's compiler reports them. For finding what in the generated text
costs registers or time; the edits are experiments, not library options.

    python3 benchmarks/skel/allpairs_bisect.py --size 4096 --out DIR \\
        128x128x16/8x8@l 128x128x16/8x8@l+p0 128x128x16/8x8@l+p0+g1+nooff

Edits (after the tiling, joined by +): pN A's tile rows padded by N (the library's
choice otherwise), nooff the A and C offsets of a device's part dropped from the text
(one device: they are 0), and the sweep options of run.py: gN blocks numbered N block
rows together, rN at most N registers, mad, noid no identity;
lift Lift's own text for 4096^3 (benchmarks/opencl/matmul_hand/lift_best_4096.cl, its
signature renamed; tiling 128x128x16/8x8@l, size 4096 only).

Each variant is timed twice: the calls' host time in alternating blocks with cuBLAS's
(what a user waits for), and the kernel alone from OpenCL profiling events beside
cuBLAS's CUDA events (the queues profile: +5 us a call on the host time).
"""

from __future__ import annotations

import argparse
import functools
import json
import re
import sys
from pathlib import Path
from typing import NamedTuple

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parents[1] / "examples" / "skel"))
sys.path.insert(0, str(HERE))

from run import (  # noqa: E402
    _capture_source,
    _nvidia_registers,
    _tile_options,
    paired,
    timeit,
    torch_cuda,
)

import mcl.skel as sk  # noqa: E402
import mcl.skel.allpairs as ap  # noqa: E402


class Variant(NamedTuple):
    """A variant: its tiling, build options, identity flag and edits of the source."""

    tile: str
    options: tuple
    identity: bool
    pad: int | None      # A's tile rows padded by this (None: the library's choice)
    nooff: bool          # the A and C offsets dropped
    lift: bool           # Lift's own text in the skeleton's place


def variant(text: str) -> Variant:
    """The variant ``TILE+EDIT+...``: the edits of the source here, the sweep's options
    of run.py (+noid, +gN, +rN, +mad) through its parser."""
    tile, *edits = text.split("+")
    pad, nooff, lift, rest = None, False, False, []
    for e in edits:
        if e == "lift":
            lift = True
        elif e == "nooff":
            nooff = True
        elif re.fullmatch(r"p\d+", e):
            pad = int(e[1:])
        else:
            rest.append(e)
    shape, opts, identity = _tile_options("+".join([tile, *rest]))
    return Variant(shape, opts or (), identity, pad, nooff, lift)


class _edited:
    """Shape l's source with the variant's edits while the block runs (each edited
    text made once: the skeleton asks for its source at every call)."""

    def __init__(self, v: Variant):
        self.v = v

    def __enter__(self):
        self.orig = ap.lift_source
        v, orig = self.v, self.orig

        @functools.cache
        def source(bm, bn, bk, tm, tn, p, has_identity):
            if v.lift:
                return _lift_text()
            text = orig(bm, bn, bk, tm, tn, p if v.pad is None else v.pad, has_identity)
            if v.nooff:
                text = text.replace("A += a_off;", "").replace("C += c_off;", "")
            return text
        ap.lift_source = source

    def __exit__(self, *exc):
        ap.lift_source = self.orig
        return False


def _lift_text() -> str:
    """Lift's 16-deep kernel for 4096^3 with the skeleton's kernel name and signature
    (its A and C offsets unused: one device)."""
    text = (HERE.parents[1] / "benchmarks/opencl/matmul_hand/lift_best_4096.cl").read_text()
    sig = ("void matmul(const int n, const int m, const int p, global float* restrict out, "
           "const global float* restrict A, const global float* restrict B)")
    assert sig in text
    return text.replace(sig, "void skel_allpairs_zr(const global float* restrict A, "
                        "const global float* restrict B, global float* restrict out, "
                        "const int a_off, const int c_off, const int count_arg)")


class _events:
    """The events of the kernels enqueued while the block runs (skeletons enqueue through
    the module's function, looked up at each call)."""

    def __enter__(self):
        import pyopencl as cl
        self.cl, self.orig, self.found = cl, cl.enqueue_nd_range_kernel, []
        orig, found = self.orig, self.found

        def enqueue(*args, **kwargs):
            ev = orig(*args, **kwargs)
            found.append(ev)
            return ev
        cl.enqueue_nd_range_kernel = enqueue
        return self.found

    def __exit__(self, *exc):
        self.cl.enqueue_nd_range_kernel = self.orig
        return False


def kernel_times(mm, A, B, devs, torch, ta, tb, reps=20):
    """Median milliseconds of the skeleton's kernel (OpenCL events) and of cuBLAS's
    (CUDA events)."""
    import statistics
    with _events() as evs:
        for _ in range(reps):
            mm(A, B)
            devs.finish()
    ms = statistics.median((e.profile.end - e.profile.start) * 1e-6 for e in evs)
    if torch is None:
        return ms, None
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    ref = []
    for _ in range(reps):
        start.record()
        ta @ tb
        end.record()
        torch.cuda.synchronize()
        ref.append(start.elapsed_time(end))
    return ms, statistics.median(ref)


def main() -> int:
    ap_ = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap_.add_argument("variants", nargs="+")
    ap_.add_argument("--size", type=int, default=4096)
    ap_.add_argument("--reps", type=int, default=40)
    ap_.add_argument("--kind", default=None)
    ap_.add_argument("--out", type=Path)
    args = ap_.parse_args()
    import matmul as ex
    torch = torch_cuda()
    devs = sk.init(num_devices=1, device_type=args.kind, profiling=True)
    n = args.size
    a, b = ex.inputs(n)
    A, B = sk.Matrix(a), sk.Matrix(b)
    A._ensure(sk.block())
    B._ensure(sk.copy())
    if torch:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        want = (ta @ tb).cpu().numpy()
    else:
        want = a @ b
    rows = []
    for text in args.variants:
        v = variant(text)
        mm = sk.AllPairs(zip=ex.MULT, reduce=ex.ADD, identity=0.0 if v.identity else None,
                         tile=v.tile, options=v.options or None)
        row = {"variant": text, "size": n}
        with _edited(v), _capture_source() as src:
            try:
                res = mm(A, B).to_numpy()
            except Exception as e:  # noqa: BLE001 - a variant that fails is a result
                row["error"] = str(e)[:300]
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            row["correct"] = bool(np.allclose(res, want, rtol=1e-3, atol=1e-2))
            if row["correct"]:
                if torch:
                    t, t_ref = paired(lambda: mm(A, B), devs.finish,  # noqa: B023
                                      lambda: ta @ tb, torch.cuda.synchronize, args.reps)
                    row.update(skeleton_s=t, torch_s=t_ref, skeleton_vs_torch=round(t_ref / t, 3))
                else:
                    row["skeleton_s"] = timeit(lambda: mm(A, B), devs.finish, args.reps)  # noqa: B023
                ms, ref_ms = kernel_times(mm, A, B, devs, torch, *((ta, tb) if torch else (0, 0)))
                row["kernel_ms"] = ms
                if ref_ms:
                    row.update(cublas_ms=ref_ms, kernel_vs_cublas=round(ref_ms / ms, 3))
        row.update(_nvidia_registers(devs, src.get("source"), mm.options))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"allpairs_bisect_{n}.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
