"""Time convolution versions, and variants of them with other `const` values, on
the NVIDIA OpenCL device, and show what the NVIDIA compiler made of each
(registers, spills, blocks per SM, constant/shared/global load counts in the PTX):
for finding the best tile shape and outputs per thread in one GPU run.

Every positional argument is an .mcpl file of examples/convolution (a function
`convolution(h, w, fh, fw, output, input, filter)`), optionally followed (in the
same argument) by overrides of its `const int` values, by build options and by the
word `specialize` (the sizes generated as compile-time constants, as
`mcl gen --specialize`). A comma list sweeps a value: the product of all lists is
timed.

    python benchmarks/opencl/conv_variants.py examples/convolution/hopper_v1.mcpl \\
        "examples/convolution/hopper_v2.mcpl rows=2,4,8 cols=4,8" \\
        "examples/convolution/hopper_v2.mcpl rows=4 cols=4 -cl-nv-maxrregcount=128" \\
        --size 4096 --filter 9 --out DIR

Each variant is generated for --target (hopper), built with its launch plan's
options (an option given here replaces the plan's option of the same name), run
once on inputs from examples/convolution/reference.py and verified against its
reference (`ok`), then timed with OpenCL profiling events (best and median of
--repeats). The fraction of the roofline is the compulsory bound of
mcl.analyses.roofline for perfect.mcpl at the size (as benchmarks/case_studies
reports it: 0.0411 ms at 4096^2 with a 9 x 9 filter on hopper) over the best
time. `--list` generates every variant without a device (no timing). Without an
NVIDIA OpenCL device the script exits with status 2. Results go to
DIR/conv_variants_H_W_FH_FW.json.
"""

from __future__ import annotations

import argparse
import itertools
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
EXAMPLE = ROOT / "examples" / "convolution"


class VariantError(Exception):
    """A variant that cannot be made (an unknown `const`, a file that does not exist)."""


def parse_spec(spec: str) -> tuple[Path, dict[str, list[str]], list[str], bool]:
    """``FILE [NAME=V[,V...]]... [-OPTION]... [specialize]`` -> (file, value lists, build
    options, whether the sizes are generated as compile-time constants)."""
    file, *rest = spec.split()
    path = Path(file)
    if not path.is_file():
        raise VariantError(f"{file}: no such file")
    sweep: dict[str, list[str]] = {}
    options: list[str] = []
    specialize = False
    for token in rest:
        if token == "specialize":
            specialize = True
        elif token.startswith("-"):
            options.append(token)
        elif re.fullmatch(r"[A-Za-z_]\w*=[^=]+", token):
            name, values = token.split("=", 1)
            sweep[name] = [v for v in values.split(",") if v]
        else:
            raise VariantError(f"'{token}' in '{spec}' is neither NAME=VALUE[,VALUE...] "
                               f"nor a build option (-...) nor 'specialize'")
    return path, sweep, options, specialize


def override(source: str, values: dict[str, str], file: str) -> str:
    """``source`` with ``const int NAME = ...;`` set to each value (exactly one such
    declaration per name)."""
    for name, value in values.items():
        pat = re.compile(rf"(\bconst\s+int\s+{re.escape(name)}\s*=\s*)[^;,)]+([;,)])")
        found = pat.findall(source)
        if len(found) != 1:
            raise VariantError(f"{file}: {len(found)} declarations 'const int {name} = ...' "
                               f"(need exactly one to override)")
        source = pat.sub(lambda m, v=value: f"{m.group(1)}{v}{m.group(2)}", source)
    return source


def expand(specs: list[str], workdir: Path) -> list[dict]:
    """Every variant of the specs: its name, the (rewritten) .mcpl path, the options."""
    out = []
    for spec in specs:
        path, sweep, options, specialize = parse_spec(spec)
        names = list(sweep)
        for combo in itertools.product(*(sweep[n] for n in names)):
            values = dict(zip(names, combo, strict=True))
            label = " ".join([path.stem, *(f"{k}={v}" for k, v in values.items()), *options]
                             + ["specialized"] * specialize)
            if values:
                text = override(path.read_text(), values, str(path))
                d = workdir / f"v{len(out)}"
                d.mkdir()
                mcpl = d / path.name
                mcpl.write_text(text)
            else:
                mcpl = path
            out.append({"name": label, "file": str(path), "mcpl": mcpl, "values": values,
                        "options": options, "specialize": specialize})
    return out


def ptx_stats(ptx: str) -> dict[str, int]:
    """Counts of the instructions that decide a convolution kernel's speed."""
    pats = {
        "fma": r"\bfma\.rn\.f32\b",
        "ld.const": r"\bld\.const\.",
        "ld.shared.v4": r"\bld\.shared\.v4\.",
        "ld.shared.f32": r"\bld\.shared\.f32\b",
        "ld.global.v4": r"\bld\.global(\.nc)?\.v4\.",
        "ld.global.f32": r"\bld\.global(\.nc)?\.f32\b",
        "st.global.v4": r"\bst\.global\.v4\.",
        "local (spill)": r"\b(ld|st)\.local\.",
        "bar.sync": r"\bbar\.sync\b",
    }
    return {k: len(re.findall(v, ptx)) for k, v in pats.items()}


def merge_options(plan_options: list[str], extra: list[str]) -> list[str]:
    """The plan's options with those ``extra`` names again replaced by ``extra``'s."""
    def key(o: str) -> str:
        return o.split("=", 1)[0]
    given = {key(o) for o in extra}
    return [o for o in plan_options if key(o) not in given] + extra


def case_study_helpers():
    """(reference_module, analyses_roofline) of benchmarks/case_studies (the reference
    and the roofline of the case studies)."""
    cases = str(ROOT / "benchmarks" / "case_studies")
    if cases not in sys.path:
        sys.path.insert(0, cases)
    from baselines import analyses_roofline
    from mcpl_versions import reference_module
    return reference_module, analyses_roofline


def nvidia_device():
    try:
        import pyopencl as cl
        for p in cl.get_platforms():
            if "NVIDIA" in p.name and p.get_devices():
                return p.get_devices()[0]
    except Exception:  # no ICD loader or no platform
        return None
    return None


def measure(v: dict, kernel, ctx, queue, dev, sizes: dict, bufs: dict, expected: np.ndarray,
            tol: dict, repeats: int, bound_s: float | None) -> dict:
    """Build, verify and time one variant."""
    import pyopencl as cl

    from mcl.opencl import vendor
    plan = kernel.plan
    row: dict = {"values": v["values"], "file": v["file"]}
    nvidia = "NVIDIA" in dev.platform.name
    options = merge_options(
        [*plan.options_for(dev.platform.name),
         *(c.option(sizes[c.name]) for c in plan.compile_time)],
        ["-cl-nv-verbose"] * nvidia + v["options"])
    row["options"] = options
    t0 = time.perf_counter()
    prog = cl.Program(ctx, kernel.source).build(options=options)
    row["build_s"] = round(time.perf_counter() - t0, 2)
    log = prog.get_build_info(dev, cl.program_build_info.LOG)
    row["ptxas"] = " | ".join(ln.strip() for ln in log.splitlines()
                              if "ptxas" in ln or "Used" in ln or "spill" in ln)
    ptx = prog.binaries[0]
    if nvidia:     # the program binary is PTX
        row["ptx"] = ptx_stats(ptx.decode(errors="replace"))
    glob, local = kernel.launch_sizes(sizes)
    row.update(global_size=list(glob), local_size=list(local))
    try:
        if not nvidia:
            raise RuntimeError("not an NVIDIA device: no PTX")
        loaded = vendor.load(ptx, plan.kernel, vendor.max_registers(options))
        row.update(registers=loaded.registers, spill_bytes=loaded.local_bytes,
                   shared_bytes=loaded.shared_bytes,
                   blocks_per_sm=loaded.occupancy(int(np.prod(local))))
        loaded.unload()
    except Exception as e:  # no cuda.bindings: the build log has the registers
        m = re.search(r"Used (\d+) registers", log)
        row["registers"] = int(m.group(1)) if m else None
        row["vendor_error"] = str(e)[:200]
    k = cl.Kernel(prog, plan.kernel)
    for i, a in enumerate(plan.arguments):
        if a.kind == "buffer":
            k.set_arg(i, bufs[a.name])
        elif a.kind == "value":     # passed by value (mcl.opencl.by_value): a struct
            host = bufs[f"host:{a.name}"]
            packed = np.zeros((), np.dtype([("v", host.dtype, (host.size,))]))
            packed["v"] = host.ravel()
            k.set_arg(i, packed)
        else:
            k.set_arg(i, np.dtype(a.dtype).type(sizes[a.name]))
    cl.enqueue_fill_buffer(queue, bufs["output"], np.float32(np.nan), 0,
                           expected.nbytes).wait()
    cl.enqueue_nd_range_kernel(queue, k, glob, local).wait()
    out = np.empty_like(expected)
    cl.enqueue_copy(queue, out, bufs["output"])
    bad = ~np.isclose(out, expected, rtol=tol["rtol"], atol=tol["atol"])
    row["ok"] = not bool(bad.any())
    row["mismatches"] = int(bad.sum())
    times = []
    for _ in range(3 + repeats):
        ev = cl.enqueue_nd_range_kernel(queue, k, glob, local)
        ev.wait()
        times.append((ev.profile.end - ev.profile.start) * 1e-6)
    times = times[3:]
    row.update(best_ms=min(times), median_ms=statistics.median(times))
    flops = 2 * sizes["h"] * sizes["w"] * sizes["fh"] * sizes["fw"]
    row["gflops"] = flops / row["best_ms"] * 1e-6
    if bound_s:
        row["of_roofline"] = bound_s * 1e3 / row["best_ms"]
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=" ".join(__doc__.split("\n\n", 1)[0].split()),
                                 epilog=__doc__.split("\n\n", 1)[1],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("specs", nargs="+", metavar="'FILE [NAME=V[,V...]]... [-OPTION]...'")
    ap.add_argument("--size", type=int, default=4096, help="h = w (default 4096)")
    ap.add_argument("--filter", type=int, default=9, help="fh = fw (default 9)")
    ap.add_argument("--repeats", type=int, default=20, help="timed launches per variant")
    ap.add_argument("--target", default="hopper", help="leaf level to generate for")
    ap.add_argument("--budget", type=float, default=100.0,
                    help="seconds after which the remaining variants are skipped")
    ap.add_argument("--device", metavar="PLATFORM:DEVICE",
                    help="another OpenCL device (substrings, as `mcl run --device`), for "
                         "checking the benchmark itself on a CPU; default: the NVIDIA GPU")
    ap.add_argument("--list", action="store_true",
                    help="only generate every variant (no device needed) and list them")
    ap.add_argument("--out", type=Path, help="directory for the JSON results")
    args = ap.parse_args(argv)

    from mcl.diagnostics import McplError
    from mcl.opencl import generate

    sizes = {"h": args.size, "w": args.size, "fh": args.filter, "fw": args.filter}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            variants = expand(args.specs, Path(tmp))
            for v in variants:
                (v["generated"],) = generate(v["mcpl"], args.target,
                                             specialize=v["specialize"])
        except (VariantError, McplError) as e:
            print(f"conv_variants: {e}", file=sys.stderr)
            return 1
        print(f"{len(variants)} variants at h = w = {args.size}, fh = fw = {args.filter}")
        if args.list:
            for v in variants:
                plan = v["generated"].plan
                print(f"  {v['name']:44s} local size {' x '.join(plan.local_size)}")
            return 0
        if args.device:
            from mcl.opencl.device import select_device
            try:
                dev = select_device(args.device)
            except McplError as e:
                print(f"conv_variants: {e}", file=sys.stderr)
                return 2
        else:
            dev = nvidia_device()
        if dev is None:
            print("conv_variants: no NVIDIA OpenCL device (this benchmark times kernels on "
                  "an NVIDIA GPU; `mcl devices` lists what OpenCL sees; --list checks the "
                  "variants without a device)", file=sys.stderr)
            return 2
        return run_all(args, variants, sizes, dev)


def run_all(args, variants: list[dict], sizes: dict, dev) -> int:
    import pyopencl as cl

    from mcl.opencl.runtime import Kernel
    reference_module, analyses_roofline = case_study_helpers()
    ref = reference_module("convolution")
    roof = analyses_roofline(EXAMPLE / "perfect.mcpl", sizes)
    bound_s = roof.get("compulsory_bound_s")
    print(f"device: {dev.name}; roofline bound (mcl.analyses, perfect.mcpl): "
          + (f"{bound_s * 1e3:.4f} ms ({roof.get('best_bound')}-bound)" if bound_s
             else f"none ({roof.get('error')})"))
    t0 = time.perf_counter()
    data = ref.inputs(np.random.default_rng(0), **sizes)
    expected = ref.reference(**data)["output"]
    print(f"reference computed in {time.perf_counter() - t0:.1f} s")
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    mf = cl.mem_flags
    bufs = {"input": cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data["input"]),
            "filter": cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=data["filter"]),
            "output": cl.Buffer(ctx, mf.READ_WRITE, size=expected.nbytes),
            "host:filter": data["filter"]}
    results = {"sizes": sizes, "device": dev.name, "target": args.target,
               "roofline": roof, "bound_ms": bound_s * 1e3 if bound_s else None,
               "repeats": args.repeats, "variants": {}}
    start = time.perf_counter()
    for n, v in enumerate(variants, 1):
        name = v["name"]
        if time.perf_counter() - start > args.budget:
            results["variants"][name] = {"skipped": f"--budget {args.budget:g} s spent"}
            print(f"[{n}/{len(variants)}] {name}: skipped (budget)")
            continue
        try:
            kernel = Kernel(v["generated"], ctx, queue)
            row = measure(v, kernel, ctx, queue, dev, sizes, bufs, expected, ref.TOLERANCE,
                          args.repeats, bound_s)
            frac = f"{row['of_roofline']:6.1%} of roofline" if "of_roofline" in row else ""
            print(f"[{n}/{len(variants)}] {name:44s} {row['best_ms']:7.4f} ms "
                  f"(median {row['median_ms']:.4f}) {row['gflops']:7.0f} GFLOP/s {frac} "
                  f"{'ok' if row['ok'] else 'WRONG (' + str(row['mismatches']) + ')'}")
            print(f"{'':8s}regs {row.get('registers')} spill {row.get('spill_bytes')} "
                  f"blocks/SM {row.get('blocks_per_sm')} build {row['build_s']} s  "
                  + " ".join(f"{k} {c}" for k, c in row.get("ptx", {}).items()))
        except Exception as e:  # an experiment reports every failure and goes on
            row = {"error": str(e)[:3000], "values": v["values"], "file": v["file"]}
            print(f"[{n}/{len(variants)}] {name}: FAILED: {str(e)[:1000]}")
        results["variants"][name] = row
    good = {k: r for k, r in results["variants"].items() if r.get("ok")}
    if good:
        best = min(good, key=lambda k: good[k]["best_ms"])
        results["best"] = best
        r = good[best]
        print(f"best: {best}: {r['best_ms']:.4f} ms"
              + (f", {r['of_roofline']:.1%} of the roofline bound" if "of_roofline" in r
                 else ""))
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        s = sizes
        path = args.out / f"conv_variants_{s['h']}_{s['w']}_{s['fh']}_{s['fw']}.json"
        path.write_text(json.dumps(results, indent=1, default=str))
        print(f"wrote {path}")
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
