"""Matmul on a multicore CPU: the cpu versions of examples/matmul run through PoCL
against numpy's SGEMM (float32 a @ b, OpenBLAS) on the same cores, in one run.

    python benchmarks/cpu_matmul.py                       # 1024^3 and 2048^3, all cores
    python benchmarks/cpu_matmul.py --threads 16 --sizes 2048 4096

Both sides get the same number of threads (--threads, default: every core of the
machine): OPENBLAS_NUM_THREADS / OMP_NUM_THREADS for numpy, POCL_CPU_MAX_CU_NUM /
POCL_MAX_PTHREAD_COUNT for PoCL, set before either starts. The OpenCL device is PoCL's
CPU device (--device, default the platform "Portable Computing Language"), whatever
MCL_DEVICE says, so that a GPU registered beside it is not chosen.

Each version is verified against numpy (float64 reference) at every size before it is
timed; kernel times come from OpenCL profiling events, best of --repeat after a
warm-up; numpy is timed with perf_counter, best of --repeat, in the same run. A
version whose first launch takes longer than --slow seconds is timed once. Prints the
table and writes results.json and results.md under --out.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "matmul"
DEFAULT_OUT = ROOT / "benchmarks" / "results" / "cpu_matmul"


def _args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog="\n\n".join(__doc__.split("\n\n")[1:]))
    ap.add_argument("--sizes", type=int, nargs="+", default=[1024, 2048],
                    help="n = m = p of each run (default: 1024 2048)")
    ap.add_argument("--versions", nargs="+", default=None,
                    help="version names (default: every examples/matmul/cpu*.mcpl)")
    ap.add_argument("--threads", type=int, default=os.cpu_count(),
                    help="threads for numpy and PoCL (default: every core, %(default)s here)")
    ap.add_argument("--device", default="Portable Computing Language:",
                    help="PLATFORM:DEVICE substrings of the OpenCL device (default: PoCL)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per version (default 5)")
    ap.add_argument("--slow", type=float, default=5.0,
                    help="a version slower than this many seconds is timed once (default 5)")
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT,
                    help="directory for results.json and results.md (default: %(default)s)")
    return ap.parse_args(argv)


def _set_threads(threads: int) -> None:
    """Before numpy or PoCL start: both use ``threads`` threads."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                "POCL_CPU_MAX_CU_NUM", "POCL_MAX_PTHREAD_COUNT"):
        os.environ[var] = str(threads)


def _versions(names) -> list[str]:
    if names:
        return list(names)
    found = sorted(f.stem for f in EXAMPLES.glob("cpu*.mcpl"))
    return sorted(found, key=lambda s: (s != "cpu", int(s.split("_v")[1]) if "_v" in s else 0))


def main(argv=None) -> int:
    args = _args(argv)
    _set_threads(args.threads)
    import numpy as np
    sys.path.insert(0, str(ROOT))
    import mcl
    from mcl.diagnostics import McplError
    from mcl.opencl import device as devices

    ref = {}
    exec(compile((EXAMPLES / "reference.py").read_text(), "reference.py", "exec"), ref)
    try:
        dev = devices.select_device(args.device)
    except McplError as e:
        print(f"cpu_matmul: {e}", file=sys.stderr)
        return 1
    info = devices.describe(dev)
    versions = _versions(args.versions)
    print(f"device: {info.spec} ({info.compute_units} compute units); threads: {args.threads}; "
          f"versions: {', '.join(versions)}", flush=True)
    kernels, failed = {}, {}
    for v in versions:
        try:
            kernels[v] = mcl.compile(EXAMPLES / f"{v}.mcpl", "cpu", args.device)
        except McplError as e:
            failed[v] = str(e).splitlines()[0][:300]
            print(f"  {v}: cannot be generated: {failed[v]}", file=sys.stderr)

    results = []
    for size in args.sizes:
        rng = np.random.default_rng(0)
        data = ref["inputs"](rng, size, size, size)
        a, b = data["a"], data["b"]
        want = ref["reference"](**data)["c"]
        flops = ref["flops"](size, size, size)
        a @ b   # warm-up (threads started)
        times, cpu = [], []
        for _ in range(args.repeat):
            c0, t0 = _cpu_seconds(), time.perf_counter()
            a @ b
            times.append(time.perf_counter() - t0)
            cpu.append(_cpu_seconds() - c0)
        t_np, cpu_np = min(times), min(cpu)
        print(f"\n{size}^3: numpy SGEMM {t_np * 1e3:.2f} ms, {flops / t_np / 1e9:.1f} GFLOP/s "
              f"(CPU time {cpu_np * 1e3:.1f} ms)", flush=True)
        for v in versions:
            row = {"size": size, "version": v, "numpy_s": t_np, "numpy_cpu_s": cpu_np}
            k = kernels.get(v)
            t0 = time.perf_counter()
            try:
                if k is None:
                    raise RuntimeError(failed[v])
                got = k(**data)["c"]
            except Exception as e:   # a build or launch error of the device: say it, go on
                row.update(correct=False, error=f"{type(e).__name__}: {e}"[:300])
                print(f"  {v:10s} FAILED: {row['error']}", flush=True)
                results.append(row)
                continue
            first = time.perf_counter() - t0
            err = float(np.max(np.abs(got - want)))
            ok = bool(np.allclose(got, want, **ref["TOLERANCE"]))
            row.update(correct=ok, max_abs_error=err)
            if not ok:
                print(f"  {v:10s} WRONG (max abs error {err:.3g}): not timed", flush=True)
                results.append(row)
                continue
            repeat, warmup = (1, 0) if first > args.slow else (args.repeat, 1)
            c0 = _cpu_seconds()
            t = k.time(repeat=repeat, warmup=warmup, **data)
            cpu_t = (_cpu_seconds() - c0) / (repeat + warmup)
            row.update(time_s=t, gflops=flops / t / 1e9, ratio=t_np / t, repeat=repeat,
                       cpu_s=cpu_t, cpu_ratio=cpu_np / cpu_t)
            results.append(row)
            print(f"  {v:10s} {t * 1e3:10.2f} ms {flops / t / 1e9:8.1f} GFLOP/s   "
                  f"numpy/mcl = {t_np / t:.3f}   (CPU time {cpu_t * 1e3:.1f} ms, "
                  f"numpy/mcl {cpu_np / cpu_t:.3f})", flush=True)

    args.out.mkdir(parents=True, exist_ok=True)
    meta = {"device": info.spec, "compute_units": info.compute_units, "threads": args.threads,
            "cpu": _cpu_name(), "cores": os.cpu_count(), "numpy": np.__version__,
            "blas": _blas(np), "repeat": args.repeat,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "python": platform.python_version(), "load_average": os.getloadavg()}
    (args.out / "results.json").write_text(json.dumps({"meta": meta, "results": results},
                                                      indent=2) + "\n")
    (args.out / "results.md").write_text(_markdown(meta, results))
    print(f"\nwrote {args.out / 'results.json'} and {args.out / 'results.md'}")
    return 0


def _cpu_seconds() -> float:
    """User and system time of this process, all its threads (numpy's and PoCL's)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _blas(np) -> str:
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]
        return f"{blas.get('name')} {blas.get('version')}"
    except Exception:
        return "unknown"


def _markdown(meta: dict, results: list[dict]) -> str:
    lines = [
        "# Matmul on the CPU: cpu versions through PoCL vs numpy SGEMM",
        "",
        f"{meta['date']}; {meta['cpu']} ({meta['cores']} cores), {meta['threads']} threads "
        f"for both; OpenCL device {meta['device']}; numpy {meta['numpy']} ({meta['blas']}); "
        f"load average before the run ended {', '.join(f'{x:.1f}' for x in meta['load_average'])}.",
        "Best of " + str(meta["repeat"]) + " (OpenCL profiling events; numpy perf_counter), "
        "each version verified against numpy first. ratio = numpy time / version time. "
        "CPU ratio: the same with the CPU time of the process (all threads; best run of "
        "numpy, mean launch of the version), which other processes on the cores disturb less.",
        "",
        "| size | version | time (ms) | GFLOP/s | numpy (ms) | numpy GFLOP/s | ratio | CPU ratio |",
        "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        n = r["size"]
        fl = 2 * n ** 3
        np_cell = f"{r['numpy_s'] * 1e3:.2f} | {fl / r['numpy_s'] / 1e9:.1f}"
        if "time_s" not in r:
            what = "failed" if "error" in r else "wrong"
            lines.append(f"| {n}³ | {r['version']} | {what} | | {np_cell} | | |")
            continue
        once = " (1 run)" if r.get("repeat") == 1 else ""
        lines.append(f"| {n}³ | {r['version']} | {r['time_s'] * 1e3:.2f}{once} | "
                     f"{r['gflops']:.1f} | {np_cell} | {r['ratio']:.3f} | "
                     f"{r['cpu_ratio']:.3f} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
