"""Where the time of a skeleton call goes, device by device: every command mcl.skel
enqueues (kernels, reads, writes, copies) with its OpenCL profiling times, relative
to the first command of the call, and per device the busy time, the span and the idle
gaps. Answers "why is 2 devices not 2x" without a profiler that sees OpenCL.

    python3 benchmarks/skel/timeline.py --out OUT [--only heat blur ...] [--quick]

Writes OUT/timeline.md (and .json). Times are from the devices' profiling clocks;
the host's share (Python, enqueues, waits) shows as gaps between commands."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "examples" / "skel"))

import mcl.skel as sk  # noqa: E402


class Recorder:
    """Wraps pyopencl's enqueue functions that mcl.skel uses and keeps (event, device,
    what) for each command enqueued while ``on``."""

    NAMES = ("enqueue_nd_range_kernel", "_enqueue_read_buffer", "_enqueue_write_buffer",
             "_enqueue_copy_buffer", "enqueue_copy", "enqueue_migrate_mem_objects")

    def __init__(self):
        import pyopencl as cl
        self.cl, self.events, self.on = cl, [], False
        self.saved = {}
        for name in self.NAMES:
            orig = getattr(cl, name)
            self.saved[name] = orig
            setattr(cl, name, self._wrap(orig, name))
        self.saved_call = cl.Kernel.__call__
        rec = self

        def call(kernel, queue, *args, **kwargs):
            ev = rec.saved_call(kernel, queue, *args, **kwargs)
            rec._keep(ev, queue, "kernel " + kernel.function_name)
            return ev
        cl.Kernel.__call__ = call

    def _wrap(self, orig, name):
        def f(queue, *args, **kwargs):
            ev = orig(queue, *args, **kwargs)
            what = name.strip("_").replace("enqueue_", "")
            if name == "enqueue_nd_range_kernel":
                what = "kernel " + args[0].function_name
            self._keep(ev, queue, what)
            return ev
        return f

    def _keep(self, ev, queue, what):
        if self.on and ev is not None and hasattr(ev, "profile"):
            self.events.append((ev, queue.device.int_ptr, what))

    def take(self, devices) -> list[dict]:
        index = {d.int_ptr: i for i, d in enumerate(devices)}
        rows = []
        for ev, dev, what in self.events:
            try:
                ev.wait()
                rows.append({"device": index.get(dev, -1), "what": what,
                             "queued": ev.profile.queued, "start": ev.profile.start,
                             "end": ev.profile.end})
            except Exception as e:  # noqa: BLE001 - a command without profiling info
                rows.append({"device": index.get(dev, -1), "what": what, "error": str(e)})
        self.events = []
        t0 = min((r["start"] for r in rows if "start" in r), default=0)
        for r in rows:
            for k in ("queued", "start", "end"):
                if k in r:
                    r[k] = (r[k] - t0) / 1e3      # us
        return rows


def summary(rows, ndev) -> list[dict]:
    out = []
    for d in range(ndev):
        mine = sorted((r for r in rows if r.get("device") == d and "start" in r),
                      key=lambda r: r["start"])
        if not mine:
            continue
        busy = sum(r["end"] - r["start"] for r in mine)
        kinds = {}
        for r in mine:
            k = r["what"].split()[0]
            kinds[k] = kinds.get(k, 0.0) + r["end"] - r["start"]
        gaps = [b["start"] - a["end"] for a, b in zip(mine, mine[1:], strict=False)]
        gaps = [g for g in gaps if g > 0]
        out.append({"device": d, "commands": len(mine), "first_start_us": mine[0]["start"],
                    "last_end_us": mine[-1]["end"], "busy_us": busy, "by_kind_us": kinds,
                    "idle_gaps_us": sum(gaps), "largest_gap_us": max(gaps, default=0.0)})
    return out


def profile(call, finish) -> str:
    import cProfile
    import io
    import pstats
    pr = cProfile.Profile()
    pr.enable()
    call()
    finish()
    pr.disable()
    buf = io.StringIO()
    pstats.Stats(pr, stream=buf).strip_dirs().sort_stats("tottime").print_stats(22)
    return "\n".join(line for line in buf.getvalue().splitlines() if line.strip())


def cases(quick):
    import dot_product
    import gaussian_blur
    import heat
    import mandelbrot
    n = 256 if quick else 8192

    def blur():
        (img,) = gaussian_blur.inputs(n)
        M, W, f = sk.Matrix(img), gaussian_blur.weights(), gaussian_blur.blur_skeleton()
        M._ensure(sk.overlap(2), halo=True)
        W._ensure()
        return lambda: f(M, W)

    def heat_k(sync, its):
        def make():
            (t0,) = heat.inputs(n)
            M, st = sk.Matrix(t0), heat.stencil(sync)
            M._ensure(sk.overlap(sync), halo=True)
            return lambda: st(M, iterations=its)
        return make

    def mandel():
        f, idx = mandelbrot.skeleton(), sk.IndexVector(n * n)
        return lambda: f(idx, n, n, mandelbrot.MAX_ITER)

    def dot():
        x, y = dot_product.inputs(n * n)
        X, Y = sk.Vector(x), sk.Vector(y)
        X._ensure(sk.block())
        Y._ensure(sk.block())
        mult, total = dot_product.skeletons()
        return lambda: dot_product.dot(mult, total, X, Y).to_numpy()

    return {"blur": (blur, (1, 2)), "mandelbrot": (mandel, (1, 2)),
            "heat": (heat_k(1, 100), (1, 2)), "heat_sync8": (heat_k(8, 96), (1, 2)),
            "dot": (dot, (1,))}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--quick", action="store_true", help="small sizes (any device)")
    ap.add_argument("--profile", action="store_true", help="also the host's side of one "
                    "more call: the Python functions (and pyopencl calls) by own time")
    args = ap.parse_args()
    from mcl.opencl.device import all_devices, describe
    kind = "GPU" if any(describe(d).kind == "GPU" for d in all_devices()) else None
    rec = Recorder()
    result, md = {}, ["# mcl.skel call timelines", ""]
    for name, (make, counts) in cases(args.quick).items():
        if args.only and name not in args.only:
            continue
        for nd in counts:
            try:
                devs = sk.init(num_devices=nd, device_type=kind, profiling=True)
            except Exception as e:  # noqa: BLE001
                print(f"{name} on {nd}: {e}")
                continue
            if devs.count < nd:
                continue
            call = make()
            for _ in range(2):              # programs built, buffers pooled
                call()
                devs.finish()
            rec.on = True
            t0 = time.perf_counter()
            res = call()
            devs.finish()
            wall = (time.perf_counter() - t0) * 1e6
            rec.on = False
            rows = rec.take(devs.devices)
            # the same call unrecorded, a few times (the recording adds host time)
            walls = []
            for _ in range(5):
                t0 = time.perf_counter()
                call()
                devs.finish()
                walls.append(round((time.perf_counter() - t0) * 1e6))
            summ = summary(rows, nd)
            result[f"{name}/{nd}"] = {"wall_us": wall, "unrecorded_wall_us": walls,
                                      "summary": summ, "commands": rows}
            md += [f"## {name} on {nd} device(s): wall {wall:.0f} us (unrecorded: "
                   f"{', '.join(map(str, walls))} us)", "",
                   "| device | commands | first start | last end | busy | idle gaps | "
                   "largest gap | busy by kind |", "| --- | ---: | ---: | ---: | ---: | ---: | "
                   "---: | --- |"]
            for s in summ:
                kinds = ", ".join(f"{k} {v:.0f}" for k, v in s["by_kind_us"].items())
                md.append(f"| {s['device']} | {s['commands']} | {s['first_start_us']:.0f} | "
                          f"{s['last_end_us']:.0f} | {s['busy_us']:.0f} | "
                          f"{s['idle_gaps_us']:.0f} | {s['largest_gap_us']:.0f} | {kinds} |")
            md += ["", "First commands (us from the first start):", "", "```"]
            for r in sorted((r for r in rows if "start" in r), key=lambda r: r["start"])[:40]:
                md.append(f"dev{r['device']} {r['start']:9.1f} {r['end'] - r['start']:8.1f}  "
                          f"(queued {r['queued']:9.1f})  {r['what']}")
            md += ["```", ""]
            if args.profile:
                md += ["Host side of one more call (cProfile, by own time):", "", "```",
                       profile(call, devs.finish), "```", ""]
            print("\n".join(md[-50:]), flush=True)
            del res
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "timeline.json").write_text(json.dumps(result, indent=1, default=float))
    (out / "timeline.md").write_text("\n".join(md) + "\n")
    return 0


if __name__ == "__main__":
    np.seterr(all="ignore")
    raise SystemExit(main())
