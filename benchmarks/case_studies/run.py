"""The case studies of issue 10, measured: every version in examples/<kernel>/ that
lies on the path perfect -> ... -> hopper is compiled for the hopper target
(higher levels through translation, inside ``mcl.compile``), verified against the
kernel's reference.py and timed with OpenCL profiling events; the references of
the field (cuBLAS, cuDNN, torch, the OpenCL copy ceiling, the reduce0..reduce6
baselines of benchmarks/lift) are timed in the same run.

    python benchmarks/case_studies/run.py [--kernels matmul,reduction] [--quick] [--out DIR]
        [--budget-s S] [--max-version-s S] [--watchdog S]

The run has two phases, so that no OpenCL measurement shares the GPU with torch's
allocations: (1) every OpenCL version of every kernel (and the OpenCL copy ceiling,
and the Lift reduce baselines) is built, checked at the small sizes of reference.py,
timed, and verified at once against the numpy reference.py (with the roofline of
mcl.analyses for the version translated to the target), so that a run cut short keeps
verified figures; (2) torch/cuBLAS/cuDNN references and the torch copy.

A running OpenCL kernel cannot be interrupted, so before a version runs at a paper
size it runs once on a ladder of smaller sizes (the case's size parameters halved
together, from about 1/65536 of the work, in steps of at most 64 times the work);
its time per unit of work predicts the paper size. Where one run is predicted to
take longer than ``--max-version-s``, the version is measured and verified at the
largest size of the ladder predicted to fit in a quarter of that limit, and its entry
says so (``sizes``, ``reduced``): the report never mixes its time with times at the
paper size.

``--quick`` uses small sizes and few repetitions: it runs on PoCL (CPU) and tests
this script, not the GPU. Results go to DIR/results.json (written after every
version, so a run cut short, e.g. by ``--watchdog``, still leaves what it measured);
turn them into benchmarks/results/REPORT.md with report.py.
"""

from __future__ import annotations

import argparse
import datetime as dt
import faulthandler
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
if str(HERE.parents[1]) not in sys.path:          # run as a script from anywhere
    sys.path.insert(0, str(HERE.parents[1]))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from baselines import (  # noqa: E402
    analyses_roofline,
    copy_ceiling,
    reduce_baselines,
    references,
    roofline,
    torch_or_none,
    use_analyses_bound,
)
from cases import CASES, DEFAULT_KERNELS  # noqa: E402
from launch import TIMING, Launcher, RunInputs, run_version, verify_entry  # noqa: E402
from mcpl_versions import (  # noqa: E402
    ROOT,
    TARGET,
    compile_version,
    git_commit,
    reference_module,
    runtime_name,
    short_error,
    versions,
)

from mcl.opencl.sizing import scaled_sizes  # noqa: E402

# ----------------------------------------------------------------------------- the two phases

def opencl_phase(kernel: str, opts: argparse.Namespace, deadline: float,
                 save: Callable[[], None], into: dict | None = None) -> tuple[dict, list]:
    """Phase 1 for one kernel: every version at every size, each verified as soon as
    it is measured. The kernel's results go into ``into[kernel]`` before the first
    version runs (so that every ``save`` writes them, also of a kernel cut short).
    Returns them and, per run, the inputs at the paper size (None where it did not
    run) for the torch phase."""
    case = CASES[kernel]
    ref = reference_module(kernel)
    vs = versions(kernel, opts.extra.get(kernel, []), opts.only)
    result: dict[str, Any] = {"metric": case.metric, "primary_ref": case.primary_ref,
                              "versions": [v["version"] for v in vs], "runs": []}
    if into is not None:
        into[kernel] = result
    kept: list = []
    for index, sizes in enumerate(case.quick_sizes if opts.quick else case.sizes):
        run: dict[str, Any] = {"sizes": sizes}
        result["runs"].append(run)
        if time.monotonic() > deadline:
            run["skipped"] = "time budget spent"
            kept.append(None)
            continue
        t0 = time.perf_counter()
        args = ref.inputs(np.random.default_rng([10, index]), **sizes)
        run["inputs_s"] = time.perf_counter() - t0
        inputs = RunInputs(ref, index, sizes, args, case.metric)
        run["roofline"] = roofline(ref, args)
        if vs and vs[0]["version"] == "perfect":
            use_analyses_bound(run["roofline"], analyses_roofline(ROOT / vs[0]["file"], args))
        run["verification"] = ("numpy reference.py at the measured size (full output), "
                               "right after each version")
        run["results"] = []
        for v in vs:
            if time.monotonic() > deadline:
                run["results"].append({**v, "status": "skipped", "reason": "time budget spent"})
                continue
            print(f"  {kernel} {sizes} {v['version']} ...", flush=True)
            entry, got, ran_at = run_version(v, ref, inputs, scaled_sizes(ref, sizes), opts)
            run["results"].append(entry)
            save()  # before the verification: a stall there keeps the timing
            verify_entry(entry, got, ref, inputs, ran_at)
            del got
            reduced = f" at {ran_at} (reduced)" if "reduced" in entry else ""
            print(f"    {entry['status']} {entry.get('reason', '')}"
                  f"{entry.get('timing', {}).get('median_s', '')}{reduced}", flush=True)
            save()  # a run cut short by a time limit keeps every finished version
        run["reference_s"] = inputs.reference_s.get(inputs.key(sizes))
        if kernel == "reduction" and time.monotonic() < deadline:
            run["references"] = reduce_baselines(args, opts)  # OpenCL: phase 1
            save()
        kept.append(args)
        del inputs
    return result, kept


def torch_phase(kernel: str, result: dict, kept: list, opts: argparse.Namespace,
                save: Callable[[], None]) -> None:
    """Phase 2 for one kernel: the torch references at every size phase 1 ran."""
    case = CASES[kernel]
    for run, args in zip(result["runs"], kept, strict=True):
        if args is None:
            continue
        print(f"  {kernel} {run['sizes']} torch references ...", flush=True)
        run["references"] = references(case, args, opts) + run.get("references", [])
        save()
    kept.clear()


def device_description(spec: str | None) -> dict:
    try:
        from mcl.opencl.device import describe, select_device
        info = describe(select_device(spec))
        return {"opencl": info.spec, "kind": info.kind, "compute_units": info.compute_units}
    except Exception as e:
        return {"error": short_error(e)}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kernels", default=",".join(DEFAULT_KERNELS),
                    help=f"comma-separated, from {', '.join(CASES)}")
    ap.add_argument("--quick", action="store_true",
                    help="small sizes, 1 warm-up and 3 runs (tests the script on PoCL)")
    ap.add_argument("--out", default="benchmarks/results/case_studies")
    ap.add_argument("--device", default=None, help="PLATFORM:DEVICE (default: MCL_DEVICE)")
    ap.add_argument("--repeats", type=int, default=None, help="timed runs (default 10)")
    ap.add_argument("--warmup", type=int, default=None, help="untimed runs (default 2)")
    ap.add_argument("--budget-s", type=float, default=420.0,
                    help="phase 1 (OpenCL) starts no new version after this many seconds "
                         "from the start; phase 2 (torch) follows")
    ap.add_argument("--max-version-s", type=float, default=20.0,
                    help="a version whose one run at the paper size is predicted (from "
                         "runs at smaller sizes) to take longer is measured at the largest "
                         "smaller size predicted to take a quarter of this, and marked")
    ap.add_argument("--too-slow-s", type=float, default=15.0,
                    help="a version whose first run takes longer is not run again")
    ap.add_argument("--watchdog", type=float, default=None, metavar="SECONDS",
                    help="dump every thread's traceback and exit after SECONDS (a stalled "
                         "driver call); results.json keeps what was measured")
    ap.add_argument("--specialize", action="store_true",
                    help="build every version with its sizes as compile-time constants "
                         "(mcl.compile(specialize=True)), as Lift's kernels are")
    ap.add_argument("--fast-math", action="store_true",
                    help="build every version with relaxed math (-cl-fast-relaxed-math, "
                         "mcl.compile(fast_math=True)); results still verified against "
                         "reference.py's tolerance")
    ap.add_argument("--versions", default=None,
                    help="comma-separated version names (file stems) of examples/KERNEL to run "
                         "(default all; files given with --extra always run)")
    ap.add_argument("--extra", action="append", default=[], metavar="KERNEL=GLOB",
                    help="also run these .mcpl files as versions of KERNEL (variants being "
                         "explored); repeatable")
    opts = ap.parse_args(argv)
    opts.only = set(opts.versions.split(",")) if opts.versions else None
    extra: dict[str, list[Path]] = {}
    for item in opts.extra:
        kernel, sep, pattern = item.partition("=")
        if not sep or kernel not in CASES:
            ap.error(f"--extra {item!r}: expected KERNEL=GLOB, KERNEL one of {', '.join(CASES)}")
        files = sorted(Path().glob(pattern)) if not Path(pattern).is_absolute() else sorted(
            Path(pattern).parent.glob(Path(pattern).name))
        if not files:
            ap.error(f"--extra {item!r}: no file matches")
        extra.setdefault(kernel, []).extend(f.resolve() for f in files)
    opts.extra = extra
    opts.repeats = opts.repeats or (3 if opts.quick else 10)
    opts.warmup = opts.warmup or (1 if opts.quick else 2)
    unknown = [k for k in opts.kernels.split(",") if k and k not in CASES]
    if unknown:
        ap.error(f"unknown kernels: {', '.join(unknown)}")
    return opts


def main(argv: list[str] | None = None,
         compile_fn: Callable[[Path, str | None, bool], Any] = compile_version,
         timer_fn: Callable[[Any, dict, str | None], Callable[[], float]] = Launcher) -> dict:
    """``compile_fn(path, device, specialize)`` gives a version's callable kernel (built
    for its sizes with ``--specialize`` or where reference.py's SPECIALIZE names it);
    ``timer_fn(kernel, args, device)`` a callable returning the seconds of one run (tests
    pass stand-ins)."""
    opts = parse_args(argv)
    opts.compile, opts.timer = compile_fn, timer_fn
    if opts.watchdog:
        faulthandler.dump_traceback_later(opts.watchdog, exit=True)
    start = time.monotonic()
    deadline = start + opts.budget_s
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {
        "meta": {"date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                 "machine": platform.node(), "python": sys.version.split()[0],
                 "commit": git_commit(), "quick": opts.quick, "target": TARGET,
                 "device": device_description(opts.device),
                 "warmup": opts.warmup, "repeats": opts.repeats,
                 "budget_s": opts.budget_s, "watchdog_s": opts.watchdog,
                 "max_version_s": opts.max_version_s, "too_slow_s": opts.too_slow_s,
                 "order": "OpenCL versions of all kernels, each verified against numpy "
                          "and analysed right after it is measured, then torch references",
                 "timing": TIMING,
                 "MCL_DEVICE": os.environ.get("MCL_DEVICE"), "runtime": runtime_name(),
                 "specialize": opts.specialize, "fast_math": opts.fast_math},
        "ceiling": {},
        "kernels": {},
    }
    path = out / "results.json"

    def save() -> None:
        results["meta"]["elapsed_s"] = round(time.monotonic() - start, 1)
        path.write_text(json.dumps(results, indent=1, default=str))

    kernels = [k for k in opts.kernels.split(",") if k]
    kept: dict[str, list] = {}
    # Phase 1: OpenCL only. torch is not imported before this phase ends.
    results["ceiling"]["opencl_copy"] = copy_ceiling(opts, "opencl_copy")
    for kernel in kernels:
        print(f"{kernel} (OpenCL):", flush=True)
        try:
            results["kernels"][kernel], kept[kernel] = opencl_phase(
                kernel, opts, deadline, save, into=results["kernels"])
        except Exception as e:  # one broken kernel must not lose the others' results
            partial = results["kernels"].get(kernel) or {}
            results["kernels"][kernel] = {**partial, "error": short_error(e),
                                          "traceback": traceback.format_exc()[-2000:]}
        save()
    results["meta"]["opencl_phase_s"] = round(time.monotonic() - start, 1)
    # Phase 2: torch (CUDA) references.
    torch = torch_or_none()
    if torch is not None:
        results["meta"]["torch"] = torch.__version__
        results["meta"]["gpu"] = torch.cuda.get_device_name()
    results["ceiling"]["torch_copy"] = copy_ceiling(opts, "torch_copy")
    for kernel in kernels:
        if kernel in kept:
            print(f"{kernel} (torch):", flush=True)
            try:
                torch_phase(kernel, results["kernels"][kernel], kept[kernel], opts, save)
            except Exception as e:
                results["kernels"][kernel]["torch_error"] = short_error(e)
    save()
    if opts.watchdog:
        faulthandler.cancel_dump_traceback_later()
    print(f"wrote {path} after {time.monotonic() - start:.0f} s")
    return results


if __name__ == "__main__":
    main()
