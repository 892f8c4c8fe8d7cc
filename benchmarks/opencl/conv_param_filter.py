"""Does the filter cost convolution hopper_v4 its loads? The kernel with its filter as
a ``__constant`` pointer (``generated``: the generated code before mcl.opencl.by_value,
sizes specialised, as ``mcl run`` builds it) against its filter as a kernel argument
passed by value (``filter_by_value``, a struct of fh * fw floats, what the generator
makes now): the arguments live in the constant bank, so the multiply-adds take the
filter as an operand and the 81 constant loads per work-item go away. Exploration,
not product code: it decided that the generator should pass small constant arrays
that way (the recorded run, benchmarks/results/perf/conv_param_filter_4096_9.json,
made the by-value copy by hand from the generated pointer form).

Both are built with the launch plan's NVIDIA options, run on the same input,
verified against examples/convolution/reference.py, then timed with OpenCL
profiling events back to back (best and median of --repeats after a warm-up) and
cold (the L2 written and read before each launch). The fraction of the roofline is
the compulsory bound of benchmarks/case_studies (0.0411 ms at 4096² with a 9 x 9
filter on hopper) over the best time. The PTX of each is searched for its constant
and global loads.

    python benchmarks/opencl/conv_param_filter.py [--size 4096] [--repeats 40]
        [--shapes 4x4x8 8x4x8 ...] --out DIR

Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
BOUND_S = 0.0411e-3      # roofline bound at 4096² with a 9 x 9 filter (hopper)


def generated(work: Path, rows: int, cols: int, warps: int) -> tuple[str, dict]:
    """hopper_v4 with ``rows`` x ``cols`` outputs per work-item and ``warps`` warps."""
    text = (ROOT / "examples" / "convolution" / "hopper_v4.mcpl").read_text()
    for name, value in (("rows", rows), ("cols", cols), ("nrWarps", warps)):
        text, k = re.subn(rf"const int {name} = \d+;", f"const int {name} = {value};", text)
        assert k == 1, name
    mcpl = work / f"hopper_v4_{rows}x{cols}x{warps}.mcpl"
    mcpl.write_text(text)
    out = work / mcpl.stem
    subprocess.run([sys.executable, "-m", "mcl.cli", "gen", "--specialize", "-o", str(out),
                    str(mcpl)], check=True, cwd=ROOT, capture_output=True)
    return (out / "convolution.cl").read_text(), json.loads((out / "convolution.json")
                                                             .read_text())


def by_pointer(source: str) -> str:
    """The generated kernel (its filter passed by value since mcl.opencl.by_value) with
    the filter as a ``__constant`` pointer again, as the generator made it before."""
    decl = "const mcl_filter_value filter"
    assert decl in source, "the generated kernel no longer passes the filter by value"
    source = source.replace(decl, "__constant float* restrict filter")
    source = re.sub(r"typedef struct \{[^}]*\} mcl_filter_value;\n", "", source)
    return source.replace("filter.v[", "filter[")


def ptx_counts(ptx: str) -> dict:
    return {"ld.const": len(re.findall(r"\bld\.const", ptx)),
            "ld.global": len(re.findall(r"\bld\.global", ptx)),
            "ld.param": len(re.findall(r"\bld\.param", ptx))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--filter", type=int, default=9)
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--shapes", nargs="+", default=["4x4x8"],
                    help="outputs per work-item down x along a row x warps (ROWSxCOLSxWARPS; "
                         "hopper_v4 is 4x4x8)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--any-device", action="store_true",
                    help="the first OpenCL device (PoCL: checks the variant, times nothing "
                         "worth reporting)")
    args = ap.parse_args(argv)
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush  # the L2 written and read
    dev = next((d for p in cl.get_platforms() if args.any_device or "NVIDIA" in p.name
                for d in p.get_devices()), None)
    if dev is None:
        print("no NVIDIA OpenCL device", file=sys.stderr)
        return 2
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    n, f = args.size, args.filter
    work = Path(tempfile.mkdtemp(prefix="conv-param-"))
    spec = importlib.util.spec_from_file_location(
        "ref", ROOT / "examples" / "convolution" / "reference.py")
    ref = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ref)
    rng = np.random.default_rng(1)
    inp = rng.random((n + f - 1, n + f - 1), dtype=np.float32)
    filt = rng.random((f, f), dtype=np.float32)
    want = ref.reference(h=n, w=n, fh=f, fw=f, input=inp, filter=filt)["output"] \
        if hasattr(ref, "reference") else None
    mf = cl.mem_flags
    d_in = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=inp)
    d_f = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=filt)
    d_out = cl.Buffer(ctx, mf.WRITE_ONLY, n * n * 4)
    packed = np.zeros((), dtype=np.dtype([("v", np.float32, (f * f,))]))
    packed["v"] = filt.ravel()
    cold = cache_flush(ctx, queue)

    rows = []
    variants = []
    for shape in args.shapes:
        r, c, w = (int(x) for x in shape.split("x"))
        source, plan = generated(work, r, c, w)
        options = [o for plat, opts in plan.get("platform_options", []) if plat == "NVIDIA"
                   for o in opts] if not args.any_device else []
        options += [f"-DMCL_h={n}", f"-DMCL_w={n}", f"-DMCL_fh={f}", f"-DMCL_fw={f}"]
        gsize, lsize = (n // (32 * c) * 32, n // (w * r) * w), (32, w)
        variants += [(f"{shape} generated", by_pointer(source), d_f, options, gsize, lsize),
                     (f"{shape} filter_by_value", source, packed, options, gsize, lsize)]
    for name, text, farg, options, gsize, lsize in variants:
        prg = cl.Program(ctx, text).build(options=options)
        k = prg.convolution
        k.set_args(d_out, d_in, farg)
        cl.enqueue_nd_range_kernel(queue, k, gsize, lsize)
        got = np.empty((n, n), np.float32)
        cl.enqueue_copy(queue, got, d_out)
        queue.finish()
        ok = bool(np.allclose(got, want, rtol=1e-4, atol=1e-5)) if want is not None else None
        times = {}
        for mode in ("warm", "cold"):
            ts = []
            for _ in range(3):
                cl.enqueue_nd_range_kernel(queue, k, gsize, lsize)
            queue.finish()
            for _ in range(args.repeats):
                if mode == "cold":
                    cold()
                e = cl.enqueue_nd_range_kernel(queue, k, gsize, lsize)
                e.wait()
                ts.append((e.profile.end - e.profile.start) * 1e-9)
            times[mode] = {"best_ms": min(ts) * 1e3, "median_ms": statistics.median(ts) * 1e3,
                           "roofline_fraction": BOUND_S / min(ts) if n == 4096 and f == 9
                           else None}
        ptx = prg.get_info(cl.program_info.BINARIES)[0].decode(errors="replace")
        row = {"variant": name, "verified": ok, **times, "ptx": ptx_counts(ptx)}
        print(json.dumps(row), flush=True)
        rows.append(row)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"conv_param_filter_{n}_{f}.json").write_text(
        json.dumps({"device": dev.name, "rows": rows}, indent=1) + "\n")
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
