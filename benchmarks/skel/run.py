"""mcl.skel on GPUs: each example on one GPU against a hand-written single OpenCL
kernel (and torch / cuBLAS where one exists), then 2 GPUs against 1 with the data
already distributed. Transfers (upload, read-back, data moved between devices
during a call) are reported separately from the skeleton times.

    python3 benchmarks/skel/run.py --out benchmarks/results/skel     (GPU machine, < 5 min)
    python3 benchmarks/skel/run.py --out /tmp/skel --quick           (small sizes, any device)
    python3 benchmarks/skel/run.py --out /tmp/skel --only matmul --allpairs-sweep   (tilings)

The heat equation runs three times in the scaling part: halos exchanged after every
iteration (sync_every=1) through pinned host memory (the default for GPUs), 8-row halos
exchanged every 8 iterations, and halos copied peer to peer (peer_copies=True: through
a small carrier buffer migrated between the devices). A scaling call slower than
SLOW_CALL_S is timed once and not repeated.

Writes OUT/skel_gpu.json and OUT/skel_gpu.md. Times are medians of repeated calls
after a warm-up call (programs built, data in place), with every queue finished."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "skel"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from handwritten import Handwritten  # noqa: E402

import mcl.skel as sk  # noqa: E402

#: a scaling call slower than this is timed once, not repeated
SLOW_CALL_S = 2.0


#: a measurement of short calls goes on beyond ``reps`` calls until this much time
#: (at most 20 x reps calls): a median of 10 calls of 0.4 ms moved by 5% between runs
MIN_TIME_S = 0.25


def _timed(fn, finish, clock=time.perf_counter) -> float:
    """Seconds (of ``clock``) of one call of ``fn`` and the wait ``finish`` after it."""
    t0 = clock()
    fn()
    finish()
    return clock() - t0


def timeit(fn, finish, reps):
    fn()
    finish()
    times = []
    while len(times) < reps or (sum(times) < MIN_TIME_S and len(times) < 20 * reps):
        times.append(_timed(fn, finish))
    return statistics.median(times)


def paired(fn_a, finish_a, fn_b, finish_b, reps, blocks=4):
    """The median times of ``fn_a`` and ``fn_b`` (``reps`` calls each), timed in
    alternating blocks (a x reps/blocks, b x reps/blocks, a, b, ...), the first call of
    each block untimed: a GPU's clocks drift over a run (two medians taken one after
    the other differed by 5-8% for the same kernel), while alternating call by call
    makes the GPU switch between the OpenCL and the CUDA context at every call (on an
    H100 that added 150 us to each of a dot product's calls)."""
    ta, tb = [], []
    per = max(1, -(-reps // blocks))
    for _ in range(blocks):
        for fn, fin, times in ((fn_a, finish_a, ta), (fn_b, finish_b, tb)):
            fn()
            fin()
            times += [_timed(fn, fin) for _ in range(per)]
    return statistics.median(ta), statistics.median(tb)


def host_cpu(fn, finish, reps):
    """The median CPU time of the calling thread for ``fn()`` (then ``finish()``)."""
    fn()
    finish()
    return statistics.median([_timed(fn, finish, time.thread_time) for _ in range(reps)])


def _done():
    """The wait after a call that returns its value on the host: none."""


def timed_once(fn, finish):
    t0 = time.perf_counter()
    out = fn()
    finish()
    return out, time.perf_counter() - t0


def torch_cuda():
    try:
        import torch
        if torch.cuda.is_available():
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.backends.cudnn.allow_tf32 = False
            return torch
    except ImportError:
        pass
    return None


def torch_time(torch, fn, reps):
    return timeit(fn, torch.cuda.synchronize, reps)


def init(n, kind, peer=None):
    return sk.init(num_devices=n, device_type=kind, peer_copies=peer)


class Bench:
    def __init__(self, quick: bool, kind: str | None, reps: int):
        self.quick, self.kind, self.reps = quick, kind, reps
        self.torch = None if quick else torch_cuda()

    def size(self, big, small):
        return small if self.quick else big

    # ---- one device: skeleton against the hand-written kernel (and torch)

    def one_device(self, name):
        devs = init(1, self.kind)
        hw = Handwritten(devs.context, devs.queues[0])
        fin = devs.finish
        out = getattr(self, f"one_{name}")(devs, hw, fin)
        out["skeleton_vs_handwritten"] = round(out["handwritten_s"] / out["skeleton_s"], 3)
        if out.get("torch_s"):
            out["skeleton_vs_torch"] = round(out["torch_s"] / out["skeleton_s"], 3)
        return out

    def _transfers(self, devs, start):
        moved = devs.log[start:]
        return {k: sum(t.nbytes for t in moved if t.kind == k)
                for k in ("upload", "download", "device", "mpi") if any(
                    t.kind == k for t in moved)}

    def one_saxpy(self, devs, hw, fin):
        import saxpy as ex
        n = self.size(1 << 26, 1 << 18)
        x, y, a = ex.inputs(n)
        X, Y = sk.Vector(x), sk.Vector(y)
        _, up = timed_once(lambda: (X._ensure(sk.block()), Y._ensure(sk.block())), fin)
        z = sk.Zip(ex.SAXPY)
        t = timeit(lambda: z(X, Y, a), fin, self.reps)
        res, down = timed_once(lambda: z(X, Y, a).to_numpy(), fin)
        bx, by, bo = hw.buffer(x), hw.buffer(y), hw.buffer(nbytes=x.nbytes)
        th = timeit(lambda: hw.saxpy(bx, by, bo, a, n), fin, self.reps)
        ok = np.allclose(res, hw.read(bo, n)) and np.allclose(res[:1000], a * x[:1000] + y[:1000])
        out = {"size": n, "skeleton_s": t, "handwritten_s": th, "upload_s": up,
               "readback_s": down, "correct": bool(ok)}
        if self.torch:
            tx, ty = self.torch.from_numpy(x).cuda(), self.torch.from_numpy(y).cuda()
            out["torch_s"] = torch_time(self.torch, lambda: a * tx + ty, self.reps)
        return out

    def one_dot_product(self, devs, hw, fin):
        import dot_product as ex
        n = self.size(1 << 26, 1 << 18)
        x, y = ex.inputs(n)
        X, Y = sk.Vector(x), sk.Vector(y)
        _, up = timed_once(lambda: (X._ensure(sk.block()), Y._ensure(sk.block())), fin)
        mult, total = ex.skeletons()
        # each way returns the value on the host, so the call itself is the whole wait:
        # no wait for the devices after it (for torch neither)
        def skel():
            return ex.dot(mult, total, X, Y).to_numpy()
        t_torch = None
        if self.torch:      # in alternating blocks with torch: the same clocks for both
            tx, ty = self.torch.from_numpy(x).cuda(), self.torch.from_numpy(y).cuda()
            t, t_torch = paired(skel, _done, lambda: self.torch.dot(tx, ty).item(), _done,
                                max(self.reps, 400))
        else:
            t = timeit(skel, _done, self.reps)
        got = ex.dot(mult, total, X, Y).to_numpy()[0]
        t_unfused = timeit(lambda: total(mult(X, Y)).to_numpy(), fin, self.reps)
        bx, by, bp = hw.buffer(x), hw.buffer(y), hw.buffer(nbytes=4096 * 4)

        def hand():
            hw.dot(bx, by, bp, n)
            return hw.read(bp, 1)[0]
        th = timeit(hand, _done, self.reps)
        want = ex.reference(x, y)
        out = {"size": n, "skeleton_s": t, "handwritten_s": th, "upload_s": up,
               # the calling thread's CPU time per call (the host's share of the wall time:
               # Python, pyopencl's enqueues, the wait for the one-float read)
               "skeleton_host_cpu_s": host_cpu(
                   lambda: ex.dot(mult, total, X, Y).to_numpy(), fin, self.reps),
               "handwritten_host_cpu_s": host_cpu(hand, fin, self.reps),
               "correct": bool(np.isclose(got, want, rtol=1e-3)
                               and np.isclose(hand(), want, rtol=1e-3)),
               "unfused_s": t_unfused,
               "note": "skeleton: Reduce of a deferred Zip (one fused launch, as the example; "
                       "unfused_s: Zip then Reduce), result read back; hand-written: one "
                       "fused kernel, then one group, result read back (2 kernels); each, "
                       "and torch's dot(...).item(), timed until the value is on the host"}
        if t_torch is not None:
            out["torch_s"] = t_torch
        return out

    def one_gaussian_blur(self, devs, hw, fin, n=None):
        import gaussian_blur as ex
        n = n or self.size(8192, 256)
        (img,) = ex.inputs(n)
        M, W, blur = sk.Matrix(img), ex.weights(), ex.blur_skeleton()
        _, up = timed_once(lambda: (M._ensure(sk.overlap(2), halo=True), W._ensure()), fin)
        t = timeit(lambda: blur(M, W), fin, self.reps)
        res = blur(M, W).to_numpy()
        bi, bo, bw = hw.buffer(img), hw.buffer(nbytes=img.nbytes), hw.buffer(ex.WEIGHTS)
        th = timeit(lambda: hw.blur(bi, bo, bw, n, n), fin, self.reps)
        ok = np.allclose(res, hw.read(bo, (n, n)), atol=1e-5)
        if self.quick:
            ok = ok and np.allclose(res, ex.reference(img), atol=1e-5)
        out = {"size": f"{n}x{n}", "skeleton_s": t, "handwritten_s": th, "upload_s": up,
               "correct": bool(ok)}
        if self.torch:
            F = __import__("torch.nn.functional", fromlist=["pad"])
            ti = self.torch.from_numpy(img).cuda()[None, None]
            tw = self.torch.from_numpy(ex.WEIGHTS).cuda()[None, None]
            out["torch_s"] = torch_time(
                self.torch, lambda: F.conv2d(F.pad(ti, (2, 2, 2, 2), mode="replicate"), tw),
                self.reps)
        return out

    def one_heat(self, devs, hw, fin):
        import heat as ex
        n, its = self.size(8192, 128), self.size(100, 10)
        (t0,) = ex.inputs(n)
        M, st = sk.Matrix(t0), ex.stencil()
        _, up = timed_once(lambda: M._ensure(sk.overlap(1), halo=True), fin)
        t = timeit(lambda: st(M, iterations=its), fin, max(2, self.reps // 2))
        res = st(M, iterations=its).to_numpy()
        ba, bb = hw.buffer(t0), hw.buffer(nbytes=t0.nbytes)
        th = timeit(lambda: hw.heat(ba, bb, n, n, its), fin, max(2, self.reps // 2))
        ba, bb = hw.buffer(t0), hw.buffer(nbytes=t0.nbytes)
        ok = np.allclose(res, hw.read(hw.heat(ba, bb, n, n, its), (n, n)), atol=1e-3)
        return {"size": f"{n}x{n}, {its} iterations", "skeleton_s": t, "handwritten_s": th,
                "upload_s": up, "correct": bool(ok)}

    def one_matmul(self, devs, hw, fin, n=None):
        import matmul as ex
        n = n or self.size(4096, 256)
        a, b = ex.inputs(n)
        A, B, mm = sk.Matrix(a), sk.Matrix(b), ex.skeleton()
        _, up = timed_once(lambda: (A._ensure(sk.block()), B._ensure(sk.copy())), fin)
        if self.torch:          # alternated with cuBLAS: the same clocks for both
            ta, tb = self.torch.from_numpy(a).cuda(), self.torch.from_numpy(b).cuda()
            t, t_torch = paired(lambda: mm(A, B), fin, lambda: ta @ tb,
                                self.torch.cuda.synchronize, self.reps)
        else:
            t = timeit(lambda: mm(A, B), fin, self.reps)
        res = mm(A, B).to_numpy()
        ba, bb, bc = hw.buffer(a), hw.buffer(b), hw.buffer(nbytes=a.nbytes)
        th = timeit(lambda: hw.matmul(ba, bb, bc, n, n, n), fin, self.reps)
        ok = np.allclose(res, hw.read(bc, (n, n)), rtol=1e-3, atol=1e-2)
        out = {"size": f"{n}^3", "skeleton_s": t, "handwritten_s": th, "upload_s": up,
               "skeleton_TFLOPs": round(2 * n ** 3 / t / 1e12, 2), "correct": bool(ok),
               "tile": str(mm.tiling(devs, 0, 4, 4))}
        v10 = hw.mcl_matmul(n, n, n)
        if v10 is not None:     # MCL's own fastest matmul kernel, for comparison
            bc2 = hw.buffer(nbytes=a.nbytes)
            v10(ba, bb, bc2)
            if np.allclose(res, hw.read(bc2, (n, n)), rtol=1e-3, atol=1e-2):
                out["mcl_hopper_v10_s"] = timeit(lambda: v10(ba, bb, bc2), fin, self.reps)
                out["skeleton_vs_mcl_hopper_v10"] = round(out["mcl_hopper_v10_s"] / t, 3)
        if self.torch:
            out["torch_s"] = t_torch
            out["correct"] = bool(ok and np.allclose(res, (ta @ tb).cpu().numpy(), rtol=1e-3,
                                                     atol=1e-2))
        return out

    def one_mandelbrot(self, devs, hw, fin, n=None):
        import mandelbrot as ex
        n = n or self.size(8192, 256)
        f, idx = ex.skeleton(), sk.IndexVector(n * n)
        t = timeit(lambda: f(idx, n, n, ex.MAX_ITER), fin, self.reps)
        res = f(idx, n, n, ex.MAX_ITER).to_numpy()
        bo = hw.buffer(nbytes=n * n * 4)
        th = timeit(lambda: hw.mandel(bo, n, n, ex.MAX_ITER), fin, self.reps)
        ok = (res != hw.read(bo, n * n, np.int32)).mean() < 0.001
        return {"size": f"{n}x{n}, {ex.MAX_ITER} iterations", "skeleton_s": t,
                "handwritten_s": th, "correct": bool(ok)}

    # ---- AllPairs tilings (one device), each verified first

    def allpairs_sweep(self, tiles, sizes):
        """Time the zip-reduce AllPairs (matmul) with each tiling in ``tiles`` at each
        size, after checking its result against torch (GPU) or numpy; on NVIDIA also
        the registers and spills the compiler reports for the kernel."""
        import matmul as ex
        devs = init(1, self.kind)
        fin = devs.finish
        rows = []
        for n in sizes:
            a, b = ex.inputs(n)
            A, B = sk.Matrix(a), sk.Matrix(b)
            A._ensure(sk.block())
            B._ensure(sk.copy())
            if self.torch:      # cuBLAS timed beside each tiling (paired)
                ta, tb = self.torch.from_numpy(a).cuda(), self.torch.from_numpy(b).cuda()
                want = (ta @ tb).cpu().numpy()
            else:
                want = a @ b
            for tile in tiles:
                shape, opts, identity = _tile_options(tile)
                mm = sk.AllPairs(zip=ex.MULT, reduce=ex.ADD,
                                 identity=0.0 if identity else None, tile=shape, options=opts)
                used = str(mm.tiling(devs, 0, 4, 4))
                row = {"size": n, "tile": tile, "tile_used": used}
                try:
                    with _capture_source() as src:
                        res = mm(A, B).to_numpy()
                except Exception as e:  # noqa: BLE001 - a tiling that fails is a result
                    row["error"] = str(e)[:300]
                    rows.append(row)
                    print("   ", json.dumps(row), flush=True)
                    continue
                row["correct"] = bool(np.allclose(res, want, rtol=1e-3, atol=1e-2))
                if row["correct"]:
                    t_ref = None
                    if self.torch:  # alternated with cuBLAS: the same clocks for both
                        t, t_ref = paired(lambda: mm(A, B), fin,  # noqa: B023
                                          lambda: ta @ tb,  # noqa: B023
                                          self.torch.cuda.synchronize,
                                          self.reps)
                    else:
                        t = timeit(lambda: mm(A, B), fin, self.reps)  # noqa: B023
                    row["skeleton_s"] = t
                    row["TFLOPs"] = round(2 * n ** 3 / t / 1e12, 3)
                    if t_ref:
                        row["torch_s"] = t_ref
                        row["skeleton_vs_torch"] = round(t_ref / t, 3)
                row.update(_nvidia_registers(devs, src.get("source"), mm.options))
                rows.append(row)
                print("   ", json.dumps(row), flush=True)
        return rows

    # ---- 2 devices against 1, data already distributed

    def scaling(self, name, ndev):
        import gaussian_blur
        import heat
        import mandelbrot
        import matmul
        n = self.size(8192, 256)
        devs = init(ndev, self.kind, True if name.endswith("_peer") else None)
        fin = devs.finish
        if name == "matmul":
            a, b = matmul.inputs(n)
            A, B, mm = sk.Matrix(a), sk.Matrix(b), matmul.skeleton()
            _, up = timed_once(lambda: (A._ensure(sk.block()), B._ensure(sk.copy())), fin)
            call = lambda: mm(A, B)  # noqa: E731
        elif name == "mandelbrot":
            f, idx = mandelbrot.skeleton(), sk.IndexVector(n * n)
            up = 0.0
            call = lambda: f(idx, n, n, mandelbrot.MAX_ITER)  # noqa: E731
        elif name == "gaussian_blur":
            (img,) = gaussian_blur.inputs(n)
            M, W, blur = sk.Matrix(img), gaussian_blur.weights(), gaussian_blur.blur_skeleton()
            _, up = timed_once(lambda: (M._ensure(sk.overlap(2), halo=True), W._ensure()), fin)
            call = lambda: blur(M, W)  # noqa: E731
        else:
            (t0,) = heat.inputs(n)
            sync = 8 if name == "heat_sync8" else 1     # heat_peer: copies peer to peer
            M, st = sk.Matrix(t0), heat.stencil(sync)
            its = self.size(100, 10)
            _, up = timed_once(lambda: M._ensure(sk.overlap(sync), halo=True), fin)
            call = lambda: st(M, iterations=its)  # noqa: E731
        timed_once(call, fin)                       # programs built, buffers pooled
        start = len(devs.log)
        res, once = timed_once(call, fin)
        moved = self._transfers(devs, start)
        note = None
        if once > SLOW_CALL_S:
            # a call this slow is not repeated (heat_peer took 41 s a call on two H100s
            # when peer copies moved whole buffers): the run stays within minutes
            t, note = once, f"one call timed ({once:.1f} s > {SLOW_CALL_S} s): not repeated"
        else:
            t = timeit(call, fin, self.reps)
        res, down = timed_once(res.to_numpy, fin)
        out = {"devices": ndev, "skeleton_s": t, "upload_s": up, "readback_s": down,
               "moved_during_call_bytes": moved,
               "checksum": float(np.asarray(res, np.float64).sum())}
        if note:
            out["note"] = note
        return out


def _tile_options(tile: str) -> tuple[str, tuple | None, bool]:
    """A sweep entry ``TILE[+mad][+rN][+gN][+noid]``: the tiling, the build options
    (+mad: -cl-mad-enable; +rN: at most N registers, -cl-nv-maxrregcount=N; +gN: shape
    l's blocks numbered N block rows together, -DMCL_ALLPAIRS_GROUP=N) and whether the
    AllPairs has an identity (+noid: none, the reduction starts from the first k)."""
    shape, *flags = tile.split("+")
    opts, identity = [], True
    for f in flags:
        if f == "noid":
            identity = False
        elif f == "mad":
            opts.append("-cl-mad-enable")
        elif f[:1] == "g" and f[1:].isdigit():
            opts.append(f"-DMCL_ALLPAIRS_GROUP={f[1:]}")
        elif f[:1] == "r" and f[1:].isdigit():
            opts.append(f"-cl-nv-maxrregcount={f[1:]}")
        else:
            raise SystemExit(f"run.py: unknown tile option '+{f}' in '{tile}' "
                             "(+mad, +rN, +gN or +noid)")
    return shape, tuple(opts) or None, identity


class _capture_source:
    """Remember the source of the last program mcl.skel builds (for the register
    report of the AllPairs sweep)."""

    def __enter__(self):
        from mcl.skel import program
        self.program, self.orig, self.found = program, program.build, {}

        def spy(context, dev, source, *args, **kwargs):
            self.found["source"] = source
            return self.orig(context, dev, source, *args, **kwargs)
        program.build = spy
        return self.found

    def __exit__(self, *exc):
        self.program.build = self.orig
        return False


def _nvidia_registers(devs, source, options=()) -> dict:
    """Registers and spills of ``source``'s kernel as the NVIDIA compiler reports them
    (-cl-nv-verbose); nothing on other platforms."""
    import re

    import pyopencl as cl
    dev = devs.devices[0]
    if source is None or "NVIDIA" not in dev.platform.name:
        return {}
    try:
        prog = cl.Program(devs.context, source).build(
            options=["-cl-nv-verbose", *options], devices=[dev])
        log = prog.get_build_info(dev, cl.program_build_info.LOG)
    except cl.Error as e:
        return {"registers_error": str(e)[:200]}
    out = {}
    m = re.search(r"Used (\d+) registers", log)
    if m:
        out["registers"] = int(m.group(1))
    m = re.search(r"(\d+) bytes spill stores", log)
    if m:
        out["spill_store_bytes"] = int(m.group(1))
    return out


#: the tilings --allpairs-sweep times by default (BM x BN x BK / TM x TN[, work-group
#: shape]@code shape: r registers across the k-steps with pointers advanced per
#: k-tile, i the same with 32-bit offsets per load, d each k-tile loaded and stored to
#: local memory before the k-steps, l (the default's) the structure of Lift's best.cl
#: on a (BN/TN) x (BM/TM) work-group, mcl/skel/allpairs_lift.py)
SWEEP_TILES = ["128x128x16/8x8,32x8", "128x128x16/8x8,32x8@i",
               "128x128x16/8x8,32x8@d", "128x128x16/8x8", "128x128x16/8x8,16x16",
               "128x128x16/8x8,32x8@d+mad", "128x128x8/8x8,32x8", "128x128x8/8x8,32x8@d",
               "128x64x16/8x4", "128x128x8/8x8,16x16@l", "128x128x16/8x8,16x16@l"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--allpairs-sweep", nargs="*", metavar="TILE", default=None,
                    help="also time the matmul AllPairs with each tiling (BMxBNxBK/TMxTN, "
                         "+mad: built with -cl-mad-enable, +rN: at most N registers, +gN: "
                         "shape l's blocks N block rows together, +noid: no identity; "
                         "default: a handful), each verified first")
    ap.add_argument("--sweep-sizes", nargs="*", type=int, default=None,
                    help="matrix sizes of the sweep (default 4096 and 4000; --quick: 256, 200)")

    ap.add_argument("--out", required=True, help="folder for skel_gpu.json and skel_gpu.md")
    ap.add_argument("--quick", action="store_true", help="small sizes (a smoke test on any "
                    "device, e.g. PoCL)")
    ap.add_argument("--reps", type=int, default=10, help="timed calls per measurement")
    ap.add_argument("--only", nargs="*", help="examples to run (default all), and "
                    "'overhead' for the host-side cost of tiny calls")
    args = ap.parse_args()
    from mcl.opencl.device import all_devices, describe
    gpus = [d for d in all_devices() if describe(d).kind == "GPU"]
    kind = "GPU" if gpus else None
    bench = Bench(args.quick, kind, args.reps)
    names = [n for n in args.only or ["saxpy", "dot_product", "gaussian_blur", "heat",
                                      "matmul", "mandelbrot"] if n != "overhead"]
    devs = init(None, kind)
    result = {"device": describe(devs.devices[0]).spec, "devices_available": devs.count,
              "quick": args.quick, "one_device": {}, "scaling": {}}
    started = time.perf_counter()
    for name in names:
        print(f"[{time.perf_counter() - started:6.1f} s] one device: {name}", flush=True)
        try:
            result["one_device"][name] = bench.one_device(name)
        except Exception as e:  # noqa: BLE001 - one failure must not lose the others
            result.setdefault("errors", {})[f"one_device {name}"] = repr(e)
            print(f"    FAILED: {e!r}", flush=True)
            continue
        print("   ", json.dumps(result["one_device"][name]), flush=True)
    if args.allpairs_sweep is not None:
        tiles = args.allpairs_sweep or SWEEP_TILES
        sizes = args.sweep_sizes or ([256, 200] if args.quick else [4096, 4000])
        print(f"[{time.perf_counter() - started:6.1f} s] AllPairs sweep: {tiles} at {sizes}",
              flush=True)
        result["allpairs_sweep"] = bench.allpairs_sweep(tiles, sizes)
    if devs.count >= 2:
        for name in [n for n in ("matmul", "mandelbrot", "gaussian_blur", "heat", "heat_sync8",
                                 "heat_peer") if n.split("_")[0] in names
                     or n in names]:
            runs = {}
            try:
                for nd in (1, 2):
                    print(f"[{time.perf_counter() - started:6.1f} s] {nd} devices: {name}",
                          flush=True)
                    runs[nd] = bench.scaling(name, nd)
            except Exception as e:  # noqa: BLE001 - one failure must not lose the others
                result.setdefault("errors", {})[f"scaling {name}"] = repr(e)
                print(f"    FAILED: {e!r}", flush=True)
                continue
            runs["speedup"] = round(runs[1]["skeleton_s"] / runs[2]["skeleton_s"], 2)
            runs["same_result"] = bool(np.isclose(runs[1]["checksum"], runs[2]["checksum"],
                                                  rtol=1e-4))
            result["scaling"][name] = runs
            print("   ", json.dumps(runs), flush=True)
    if not args.only or "overhead" in args.only:
        print(f"[{time.perf_counter() - started:6.1f} s] host-side cost per call", flush=True)
        result["overhead_us"] = host_overhead(kind, devs.count)
    result["total_s"] = round(time.perf_counter() - started, 1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "skel_gpu.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "skel_gpu.md").write_text(report(result))
    print(report(result))
    return 0


def host_overhead(kind, available, calls=300):
    """Microseconds per call of tiny skeleton calls (overhead.py): the host-side work of
    a call (CPU time of this thread) and the wall time with the devices finished."""
    import overhead
    out = {}
    for ndev in range(1, min(2, available) + 1):
        devs = init(ndev, kind)
        for name, fn in overhead.cases(ndev).items():
            div = overhead.iterations(name)
            cpu, wall = overhead.per_call(fn, devs, calls if div < 100 else calls // 10,
                                          rounds=3)
            out[f"{ndev} device(s): {name}"] = {"host_cpu_us": round(cpu / div, 1),
                                                 "wall_us": round(wall / div, 1)}
    return out


def _ms(s):
    return f"{s * 1e3:.3f}" if s is not None else "-"


def report(r) -> str:
    lines = [f"# mcl.skel on {r['device']} ({r['devices_available']} device(s))", "",
             "One device: time per call (ms), data already on the device; ratio = reference "
             "time / skeleton time (1 = as fast).", "",
             "| example | size | skeleton | hand-written | ratio | torch | ratio | upload | "
             "correct |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for name, o in r["one_device"].items():
        lines.append(f"| {name} | {o['size']} | {_ms(o['skeleton_s'])} | "
                     f"{_ms(o['handwritten_s'])} | {o['skeleton_vs_handwritten']} | "
                     f"{_ms(o.get('torch_s'))} | {o.get('skeleton_vs_torch', '-')} | "
                     f"{_ms(o.get('upload_s'))} | {o['correct']} |")
    mm = r["one_device"].get("matmul", {})
    if mm.get("mcl_hopper_v10_s"):
        lines += ["", f"matmul: tile {mm['tile']}; MCL's hopper_v10 kernel (generated) "
                  f"{_ms(mm['mcl_hopper_v10_s'])} ms, ratio {mm['skeleton_vs_mcl_hopper_v10']}"]
    dp = r["one_device"].get("dot_product", {})
    if dp.get("unfused_s"):
        lines += ["", f"dot_product: Zip then Reduce (not fused) {_ms(dp['unfused_s'])} ms"]
    if r.get("allpairs_sweep"):
        lines += ["", "AllPairs (matmul) tilings, one device (ms per call; ratio = torch / "
                  "skeleton):", "",
                  "| size | tile | used | ms | TFLOP/s | torch ms | ratio | registers | "
                  "correct |", "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
        for o in r["allpairs_sweep"]:
            lines.append(f"| {o['size']} | {o['tile']} | {o['tile_used']} | "
                         f"{_ms(o.get('skeleton_s'))} | {o.get('TFLOPs', '-')} | "
                         f"{_ms(o.get('torch_s'))} | {o.get('skeleton_vs_torch', '-')} | "
                         f"{o.get('registers', '-')} | "
                         f"{o.get('correct', o.get('error', '-'))} |")
    if r["scaling"]:
        lines += ["", "Two devices against one, data already distributed (ms per call; "
                  "transfers separate):", "",
                  "| example | 1 device | 2 devices | speedup | moved between devices in a "
                  "call (2 devices) | upload (1 / 2) | same result |",
                  "| --- | --- | --- | --- | --- | --- | --- |"]
        for name, s in r["scaling"].items():
            moved = s[2]["moved_during_call_bytes"].get("device", 0)
            lines.append(f"| {name} | {_ms(s[1]['skeleton_s'])} | {_ms(s[2]['skeleton_s'])} | "
                         f"{s['speedup']} | {moved / 1e6:.2f} MB | {_ms(s[1]['upload_s'])} / "
                         f"{_ms(s[2]['upload_s'])} | {s['same_result']} |")
        notes = [f"{name}, {nd} device(s): {s[nd]['note']}" for name, s in r["scaling"].items()
                 for nd in (1, 2) if s[nd].get("note")]
        if notes:
            lines += [""] + [f"* {n}" for n in notes]
    if r.get("errors"):
        lines += ["", "Failed:", ""] + [f"* {k}: {v}" for k, v in r["errors"].items()]
    if r.get("overhead_us"):
        lines += ["", "Host-side cost of a call on tiny data (us per call; CPU time of the "
                  "calling thread, and wall time with the devices finished):", "",
                  "| call | host CPU | wall |", "| --- | --- | --- |"]
        lines += [f"| {name} | {v['host_cpu_us']} | {v['wall_us']} |"
                  for name, v in r["overhead_us"].items()]
    lines += ["", f"total {r['total_s']} s", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    raise SystemExit(main())
