"""The GPU side of the fidelity harness (run it on the GPU machine; see README.md).

    python3 benchmarks/fidelity/measure.py resources --out DIR [--sweep N | --names FILE
                                                                | --heldout]
    python3 benchmarks/fidelity/measure.py time --out DIR
    ncu --csv ... python3 benchmarks/fidelity/measure.py launch --out DIR

``resources``: for every case, the OpenCL kernel generated for hopper is built by
NVIDIA's OpenCL driver; its program binary (PTX) is loaded with the CUDA driver
with the register limit of the build options, and the function's registers,
shared memory and spills and the CUDA occupancy calculator's resident blocks per
SM are recorded, and where ptxas and cuobjdump are at hand the bytes a warp keeps in
flight in its SASS (``in_flight``, mcl.opencl.sass) (``--names``: only the cases a
file names, held-out ones among them, to add or renew rows of a recorded run;
``--heldout``: the kernels of heldout_kernels/ instead, written as a new user would
write them). A version that reference.py's
SPECIALIZE names (and its variants) is built with its sizes as compile-time constants,
as ``mcl run`` builds it.
``time``: every example version, verified against reference.py, timed with OpenCL
profiling events (best of 10; each launch queued behind a kernel that keeps the device
awake, mcl.opencl.conditions.keep_awake; ``--cold``: behind a write and a read of
256 MB instead, so that the L2 holds none of the kernel's data and no dirty line whose
write back the kernel would pay for, as ncu's cache flush leaves it; ``--flush write``:
the write alone, which leaves up to the L2's size of dirty lines). ``launch``: every example
version's PTX (``--only``: the cases named, sweep variants among them, at their example's
sizes) launched once (``--again N``: N times more, back to back) through the CUDA driver
(grid, block and arguments from the launch plan, the output checked against
reference.py), for ``ncu`` to count.

A case that does not generate, build or load is a row with the message.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parents[1]))

import fidelity_cases as C  # noqa: E402

from mcl.opencl.sass import sass_of, warp_bytes_in_flight  # noqa: E402
from mcl.opencl.vendor import load, max_registers  # noqa: E402


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def nvidia_device():
    """The NVIDIA OpenCL device, or exit with what to do."""
    try:
        import pyopencl as cl
        for p in cl.get_platforms():
            if "NVIDIA" in p.name:
                devs = p.get_devices()
                if devs:
                    return p, devs[0]
    except Exception as e:  # no ICD loader, no platform
        log(f"no OpenCL platform: {e}")
    log("error: no NVIDIA OpenCL device. The fidelity harness measures on an NVIDIA GPU: "
        "run it on the GPU machine (source benchmarks/gpu_setup.sh first, which registers "
        "NVIDIA's OpenCL driver).")
    sys.exit(2)


def short(e: BaseException) -> str:
    text = " ".join(f"{type(e).__name__}: {e}".split())
    return text[:400]


class Generated:
    """A case generated for hopper: source, plan, the sizes it is built and run at."""

    def __init__(self, case: C.Case, workdir: Path):
        from mcl.analyses.kernel import parameter_values
        from mcl.mcpl import check
        from mcl.opencl.generate import generate
        from mcl.opencl.plan import evaluate

        path = workdir / (case.name.replace("/", "__").replace("[", "_").replace("]", "")
                          .replace(",", "_").replace("=", "") + ".mcpl")
        path.write_text(case.source)
        self.path = path
        kernels = generate(str(path), C.TARGET, specialize=case.specialize)
        self.kernel = kernels[0]
        checked = check(str(path))
        fn = checked.module.functions[-1]
        env = parameter_values(fn, case.sizes)
        self.env = {k: v for k, v in env.items()}
        plan = self.kernel.plan
        self.local = tuple(evaluate(e, self.env) for e in plan.local_size)
        self.groups = tuple(evaluate(e, self.env) for e in plan.num_groups)
        self.block_threads = int(np.prod(self.local))

    def options(self, platform: str) -> list[str]:
        plan = self.kernel.plan
        return [*plan.options_for(platform),
                *(c.option(int(self.env.get(c.name, c.default or 0)))
                  for c in plan.compile_time)]


def build_ptx(ctx, dev, gen: Generated) -> tuple[bytes, list[str]]:
    import pyopencl as cl
    opts = gen.options(dev.platform.name)
    prog = cl.Program(ctx, gen.kernel.source).build(options=opts, devices=[dev])
    return bytes(prog.get_info(cl.program_info.BINARIES)[0]), opts


def resources(args) -> None:
    import pyopencl as cl
    platform, dev = nvidia_device()
    ctx = cl.Context([dev])
    if args.heldout:    # the kernels no figure of the analyses was fitted on
        todo = C.heldout_cases()
    elif args.names:    # exactly these cases (one name a line), e.g. those rebuilt since
        wanted = set(args.names.read_text().split())
        todo = [c for c in C.all_cases() + C.heldout_cases() if c.name in wanted]
    else:
        todo = C.all_cases(sweep=args.sweep > 0)
        if args.kernels:
            todo = [c for c in todo if c.kernel in args.kernels]
    examples = [c for c in todo if not c.sweep]
    sweep = [c for c in todo if c.sweep]
    if not args.names and args.sweep and len(sweep) > args.sweep:   # a deterministic spread
        step = len(sweep) / args.sweep
        sweep = [sweep[int(i * step)] for i in range(args.sweep)]
    todo = examples + sweep
    log(f"resources: {len(examples)} example versions, {len(sweep)} sweep variants on "
        f"{dev.name}")
    work = Path(tempfile.mkdtemp(prefix="mcl-fidelity-"))
    t0 = time.time()

    def generated(case: C.Case) -> tuple[dict, Generated | None]:
        row = {"name": case.name, "kernel": case.kernel, "version": case.version,
               "level": case.level, "file": case.file, "digest": case.digest,
               "overrides": case.overrides, "sweep": case.sweep, "sizes": case.sizes}
        try:
            return row, Generated(case, work)
        except BaseException as e:  # noqa: BLE001 - a row, not a crash
            row["status"] = "does not generate: " + short(e)
            return row, None

    # The front end is not thread-safe (one parser): generate first, then build in threads.
    made = [generated(c) for c in todo]
    log(f"  generated {sum(g is not None for _, g in made)} in {time.time() - t0:.0f} s")

    def one(item: tuple[dict, Generated | None]) -> dict:
        row, gen = item
        if gen is None:
            return row
        row["block_threads"] = gen.block_threads
        row["local_size"], row["num_groups"] = list(gen.local), list(gen.groups)
        try:
            ptx, opts = build_ptx(ctx, dev, gen)
        except BaseException as e:  # noqa: BLE001
            row["status"] = "NVIDIA OpenCL build failed: " + short(e)
            return row
        row["build_options"] = opts
        row["max_registers"] = max_registers(opts)
        if args.ptx_dir:
            args.ptx_dir.mkdir(parents=True, exist_ok=True)
            (args.ptx_dir / (case_file_name(row["name"]) + ".ptx")).write_bytes(ptx)
        try:
            loaded = load(ptx, gen.kernel.plan.kernel, row["max_registers"])
        except BaseException as e:  # noqa: BLE001
            row["status"] = "CUDA driver cannot load the PTX: " + short(e)
            return row
        row.update(registers=loaded.registers, shared_bytes=loaded.shared_bytes,
                   local_bytes=loaded.local_bytes, const_bytes=loaded.const_bytes,
                   max_threads=loaded.max_threads)
        # the bytes a warp keeps in flight in the SASS (ptxas and cuobjdump, where at hand),
        # as mcl feedback reads them beside the GPU (Resources.in_flight)
        row["in_flight"] = warp_bytes_in_flight(sass_of(ptx, row["max_registers"]))
        try:
            row["resident_blocks"] = loaded.occupancy(gen.block_threads)
        except BaseException as e:  # noqa: BLE001
            row["status"] = "occupancy query failed: " + short(e)
            return row
        loaded.unload()
        row["status"] = "ok"
        return row

    rows: list[dict] = []
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for i, row in enumerate(pool.map(one, made)):
            rows.append(row)
            if (i + 1) % 25 == 0 or i + 1 == len(todo):
                ok = sum(r["status"] == "ok" for r in rows)
                log(f"  {i + 1}/{len(todo)} ({ok} ok) {time.time() - t0:.0f} s")
    write(args.out / "resources.json", {"device": dev.name, "driver": dev.driver_version,
                                       "rows": rows})


def _inputs(case: C.Case, seed: int = 1):
    ref = C.reference_of(case)
    rng = np.random.default_rng(seed)
    sizes = dict(case.sizes)
    args = ref.inputs(rng, **sizes)
    expected = ref.reference(**args)
    return ref, args, expected


def matches(got: np.ndarray, want: np.ndarray, tol: dict) -> tuple[bool, float]:
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    if got.shape != want.shape:
        return False, float("inf")
    err = float(np.max(np.abs(got - want))) if got.size else 0.0
    ok = bool(np.allclose(got, want, rtol=tol.get("rtol", 1e-5), atol=tol.get("atol", 1e-5)))
    return ok, err


def timing(args) -> None:
    import pyopencl as cl

    from mcl.opencl.runtime import Kernel
    _, dev = nvidia_device()
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    work = Path(tempfile.mkdtemp(prefix="mcl-fidelity-"))
    from mcl.opencl.conditions import cache_flush, keep_awake
    if args.cold:   # each launch starts with the L2 holding none of its data, as ncu's
        before = cache_flush(ctx, queue, clean=args.flush == "clean")
    else:           # behind a kernel that keeps the device awake
        before = keep_awake(ctx, queue)
    rows = []
    cases = C.heldout_cases() if args.heldout else C.example_cases(args.kernels)
    if args.timed_sweep:    # the recorded sweep variants of these kernels too
        recorded = {c["name"] for c in json.loads(C.RECORD.read_text())["cases"]}
        examples = C.example_cases(args.timed_sweep)
        cases += C.at_example_sizes([c for c in C.sweep_cases(examples) if c.name in recorded],
                                    examples)
    for case in cases:
        row = {"name": case.name, "sizes": case.sizes, "digest": case.digest}
        t0 = time.time()
        try:
            gen = Generated(case, work)
            k = Kernel(gen.kernel, ctx, queue)
            ref, inputs, expected = _inputs(case)
            call = {p: inputs[p] for p in k.plan.parameters if p in inputs}
            got = k(**{n: (v.copy() if isinstance(v, np.ndarray) else v)
                       for n, v in call.items()})
            oks = [matches(got[o], expected[o], ref.TOLERANCE) for o in expected if o in got]
            row["verified"] = all(ok for ok, _ in oks)
            row["max_error"] = max((e for _, e in oks), default=0.0)
            row["time_s"] = k.time(repeat=args.repeat, warmup=2, before=before, **call)
            row["status"] = "ok" if row["verified"] else "wrong result"
        except BaseException as e:  # noqa: BLE001
            row["status"] = short(e)
        log(f"  {case.name}: {row['status']} {row.get('time_s', 0) * 1e3:.3f} ms "
            f"({time.time() - t0:.1f} s)")
        rows.append(row)
        # written after every case: a run cut short keeps what it measured
        write(args.out / "times.json", {"device": dev.name, "cold": args.cold,
                                        "flush": args.flush if args.cold else None,
                                        "rows": rows}, quiet=True)
    log(f"wrote {args.out / 'times.json'}")


def launching(args) -> None:
    """Each example's PTX launched once through the CUDA driver, each in a process of
    its own (a launch that faults ends its process, not the run), for ncu."""
    import subprocess
    rows = []
    # names split at the commas outside their brackets (gesummv/hopper_v2[rows=2,unroll=16])
    names = set(re.split(r",(?![^\[]*\])", args.only)) if args.only else None
    # named: sweep variants among them too
    cases = C.heldout_cases() if args.heldout else \
        C.all_cases() if names is not None else C.example_cases(args.kernels)
    for case in cases:
        if names is not None and case.name not in names:
            continue
        cmd = [sys.executable, __file__, "launch-one", "--only", case.name]
        if args.ptx_dir:
            cmd += ["--ptx-dir", str(args.ptx_dir)]
        if args.again:
            cmd += ["--again", str(args.again)]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            lines = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
            row = json.loads(lines[-1]) if lines else {
                "name": case.name, "status": f"exit {p.returncode}: "
                + " ".join(p.stderr.split())[-300:]}
        except subprocess.TimeoutExpired:
            row = {"name": case.name, "status": "timed out"}
        log(f"  launch {case.name}: {row['status']}")
        rows.append(row)
    write(args.out / "launches.json", {"rows": rows})


def case_file_name(case: str) -> str:
    """A file name for a case's name (``matmul/hopper_v1[bk=8,tm=2]``)."""
    return case.replace("/", "__").replace("[", ".").replace("]", "") \
        .replace("=", "-").replace(",", ".")


def launch_one(args) -> None:
    """Launch one example case through the CUDA driver; print its row as JSON."""
    import ptx_driver as cu
    import pyopencl as cl

    from mcl.opencl.plan import evaluate
    _, dev = nvidia_device()
    ctx = cl.Context([dev])
    work = Path(tempfile.mkdtemp(prefix="mcl-fidelity-"))
    examples = C.example_cases()
    case = next(c for c in C.at_example_sizes(examples + C.sweep_cases(examples), examples)
                + C.heldout_cases() if c.name == args.only)
    row = {"name": case.name, "sizes": case.sizes, "digest": case.digest, "pid": os.getpid()}
    arrays = cu.DeviceArrays()
    try:
        gen = Generated(case, work)
        ptx, opts = build_ptx(ctx, dev, gen)
        if args.ptx_dir:
            args.ptx_dir.mkdir(parents=True, exist_ok=True)
            (args.ptx_dir / (case_file_name(case.name) + ".ptx")).write_bytes(ptx)
        loaded = load(cu.for_cuda(ptx), gen.kernel.plan.kernel, max_registers(opts))
        ref, inputs, expected = _inputs(case)
        plan = gen.kernel.plan
        env = dict(gen.env)
        env.update({k: v for k, v in inputs.items() if not isinstance(v, np.ndarray)})
        kargs, outs = [], {}
        for a in plan.arguments:
            if a.kind == "scalar":
                kargs.append((np.dtype(a.dtype).type(env[a.name]).item(), a.dtype))
                continue
            shape = tuple(evaluate(e, env) for e in a.shape)
            nbytes = int(np.prod(shape)) * np.dtype(a.dtype).itemsize
            if a.kind == "scratch":
                kargs.append((arrays.zeros(nbytes), None))
                continue
            host = inputs.get(a.name)
            host = np.zeros(shape, a.dtype) if host is None else \
                np.ascontiguousarray(host, dtype=a.dtype)
            if a.kind == "value":      # a struct of the elements (mcl.opencl.by_value)
                kargs.append((host.tobytes(), "bytes"))
                continue
            ptr = arrays.upload(host)
            kargs.append((ptr, None))
            if a.written:
                outs[a.name] = (ptr, host)
        row["grid"], row["block"] = list(gen.groups), list(gen.local)
        row["time_s"] = cu.launch(loaded, gen.groups, gen.local, kargs)
        row["again_s"] = [cu.launch(loaded, gen.groups, gen.local, kargs)
                          for _ in range(args.again)]
        oks = [matches(arrays.download(*outs[o]), expected[o], ref.TOLERANCE)
               for o in expected if o in outs]
        row["verified"] = all(ok for ok, _ in oks)
        row["max_error"] = max((e for _, e in oks), default=0.0)
        row["status"] = "ok" if row["verified"] else "wrong result through CUDA"
    except BaseException as e:  # noqa: BLE001
        row["status"] = short(e)
        if args.verbose:
            traceback.print_exc()
    print(json.dumps(row), flush=True)


def write(path: Path, data: dict, quiet: bool = False) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1) + "\n")
    if not quiet:
        log(f"wrote {path}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("resources", "time", "launch", "launch-one"))
    ap.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", "fidelity-out")))
    ap.add_argument("--sweep", type=int, default=400,
                    help="at most this many sweep variants (0: examples only)")
    ap.add_argument("--kernels", nargs="*", help="only these example kernels")
    ap.add_argument("--jobs", type=int, default=8, help="builds at a time")
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--verbose", action="store_true")
    ap.add_argument("--only", help="launch-one: the case's name; launch: names, comma-separated")
    ap.add_argument("--again", type=int, default=0,
                    help="launch-one: launch the kernel this many times more, back to back")
    ap.add_argument("--cold", action="store_true",
                    help="time: flush the L2 before each launch (see --flush)")
    ap.add_argument("--flush", choices=("clean", "write"), default="clean",
                    help="time --cold: write and then read a buffer larger than the L2 "
                         "(clean, the default: no dirty line left), or only write it")
    ap.add_argument("--names", type=Path,
                    help="resources: only the cases named in this file, one a line")
    ap.add_argument("--heldout", action="store_true",
                    help="the kernels of benchmarks/fidelity/heldout_kernels/ instead of "
                         "the examples (and their variants)")
    ap.add_argument("--ptx-dir", type=Path,
                    help="launch, resources: keep each case's PTX here")
    ap.add_argument("--timed-sweep", nargs="*", metavar="KERNEL",
                    help="time: also the sweep variants of these example kernels that "
                         "tests/analyses/fidelity/vendor.json records")
    args = ap.parse_args(argv)
    {"resources": resources, "time": timing, "launch": launching,
     "launch-one": launch_one}[args.what](args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
