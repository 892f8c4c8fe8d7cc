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
import importlib.util
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
EXAMPLES = ROOT / "examples"
if str(ROOT) not in sys.path:          # run as a script from anywhere
    sys.path.insert(0, str(ROOT))
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from cases import CASES, DEFAULT_KERNELS, Case  # noqa: E402

from mcl.opencl.sizing import divisibility_problems, fit_size, size_ladder, work_of  # noqa: E402
from mcl.versions.sizes import written_for_sizes  # noqa: E402

TARGET = "hopper"


# ----------------------------------------------------------------------------- helpers

def load_module(path: Path, name: str):
    """Import a file that is not on the package path (reference.py, gpu_env.py)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference_module(kernel: str):
    return load_module(EXAMPLES / kernel / "reference.py", f"reference_{kernel}")


def short_error(e: BaseException, limit: int = 600) -> str:
    """The message a report can quote: the first line and any compiler ``error:``
    lines (a build log is long)."""
    lines = [ln.strip() for ln in f"{type(e).__name__}: {e}".strip().splitlines() if ln.strip()]
    keep = lines[:1] + [ln for ln in lines[1:] if "error" in ln.lower()][:5]
    text = " | ".join(dict.fromkeys(keep))
    return text if len(text) <= limit else text[:limit] + " ..."


_LEVEL_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s+(?:void|int|long|float|double|bool)\b[^;{]*\(",
                       re.MULTILINE)
_VERSION_RE = re.compile(r"^([a-z_]+?)(?:_v(\d+))?$")


def level_of(path: Path) -> str | None:
    """The hardware description a version is written for: the identifier before the
    first function's return type."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(), flags=re.DOTALL)
    m = _LEVEL_RE.search(text)
    return m.group(1) if m else None


def hopper_path() -> list[str]:
    """Levels from the root of the hierarchy down to the target, from the HDL library."""
    try:
        from mcl.hdl import hardware_library
        lib = hardware_library()
        return list(reversed(lib.ancestors(TARGET))) + [TARGET]
    except Exception:  # the library is the source of truth; this is only a fallback
        return ["perfect", "accelerator", "gpu", "nvidia", TARGET]


def versions(kernel: str, extra: list[Path] = (), only: set[str] | None = None) -> list[dict]:
    """The versions of a kernel that can be brought to the target, in refinement order
    (level, then version number; the translated file ``gpu.mcpl`` before ``gpu_v1``);
    ``extra`` adds files from elsewhere (variants being explored), ``only`` keeps the
    named versions (file stems)."""
    path = hopper_path()
    found = []
    for f in sorted((EXAMPLES / kernel).glob("*.mcpl")) + sorted(extra):
        if only is not None and f.stem not in only and f not in extra:
            continue
        level = level_of(f)
        if level not in path:
            continue  # another branch (mic, xeon_phi, fermi): not translatable to hopper
        m = _VERSION_RE.match(f.stem)
        number = int(m.group(2)) if m and m.group(2) else 0
        shown = f.relative_to(ROOT) if f.resolve().is_relative_to(ROOT) else f
        found.append({"version": f.stem, "file": str(shown), "level": level,
                      "order": (path.index(level), number)})
    found.sort(key=lambda v: v["order"])
    for v in found:
        del v["order"]
    return found


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, timeout=10).stdout.strip() or None
    except Exception:
        return None


# ----------------------------------------------------------------------------- MCPL versions

def compile_version(path: Path, device: str | None, specialize: bool = False,
                    fast_math: bool = False):
    """The version as a callable kernel for the target (``mcl.compile`` translates
    higher levels down to it); ``specialize``: sizes as compile-time constants;
    ``fast_math``: relaxed math (mcl run --fast-math)."""
    from mcl.opencl import compile as mcl_compile
    return mcl_compile(str(path), target=TARGET, device=device, specialize=specialize,
                       fast_math=fast_math)


def runtime_name() -> str:
    return "mcl.compile"


def kernel_parameters(kernel) -> tuple[str, ...] | None:
    plan = getattr(kernel, "plan", None)
    params = getattr(plan, "parameters", None) or getattr(kernel, "parameters", None)
    return tuple(params) if params else None


def call_arguments(kernel, args: dict) -> dict:
    """The arguments the kernel takes (inputs() may add sizes a version does not use)."""
    params = kernel_parameters(kernel)
    return {k: v for k, v in args.items() if params is None or k in params}


def outputs_of(result: Any, names: tuple[str, ...]) -> dict:
    """The written parameters from whatever the callable returned (a dict, a tuple in
    parameter order, or one array)."""
    if isinstance(result, dict):
        return {k: _to_numpy(v) for k, v in result.items()}
    if isinstance(result, tuple | list):
        return {k: _to_numpy(v) for k, v in zip(names, result, strict=False)}
    return {names[0]: _to_numpy(result)}


def _to_numpy(a: Any) -> np.ndarray:
    return a.get() if hasattr(a, "get") else np.asarray(a)


def verify(outputs: dict, expected: dict, tolerance: dict) -> dict:
    """Compare every output with the reference; the worst errors are recorded."""
    report: dict[str, Any] = {"ok": True, "outputs": {}}
    for name, want in expected.items():
        got = outputs.get(name)
        if got is None:
            report["ok"] = False
            report["outputs"][name] = "not returned"
            continue
        got = np.asarray(got).reshape(want.shape) if np.size(got) == np.size(want) else got
        if np.shape(got) != np.shape(want):
            report["ok"] = False
            report["outputs"][name] = f"shape {np.shape(got)} instead of {np.shape(want)}"
            continue
        g, w = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        err = np.abs(g - w)
        bad = ~(err <= tolerance.get("atol", 0.0) + tolerance.get("rtol", 0.0) * np.abs(w))
        report["outputs"][name] = {"max_abs_error": float(err.max()) if err.size else 0.0,
                                   "mismatches": int(bad.sum()), "elements": int(w.size)}
        if bad.any():
            report["ok"] = False
    return report


def verify_small_sizes(kernel, ref, version: str) -> dict:
    """The version at the small test sizes of reference.py (sizes that do not divide
    the block sizes exercise the guards that the paper sizes never reach)."""
    rng = np.random.default_rng(1)
    need = getattr(ref, "DIVISIBLE_BY", {}).get(version, {})
    checked, failed = 0, []
    for sizes in ref.SIZES:
        if divisibility_problems(need, sizes):
            continue
        args = ref.inputs(rng, **sizes)
        try:
            got = outputs_of(kernel(**call_arguments(kernel, fresh(args))), tuple(ref.OUTPUTS))
            ok = verify(got, ref.reference(**fresh(args)), ref.TOLERANCE)["ok"]
        except Exception as e:
            failed.append({"sizes": sizes, "error": short_error(e, 200)})
            continue
        checked += 1
        if not ok:
            failed.append({"sizes": sizes, "error": "results differ"})
    return {"checked": checked, "failed": failed}


def _profile_seconds(event) -> float:
    return (event.profile.end - event.profile.start) * 1e-9


#: how every timed run is enqueued (the report says it)
TIMING = ("each timed run queued behind a kernel that keeps the device awake "
          "(mcl.opencl.conditions.keep_awake; torch's behind torch.cuda._sleep)")


class Launcher:
    """Runs a compiled kernel on device-resident arguments and returns its time in
    seconds from OpenCL profiling events, each run queued behind a short kernel that
    keeps the device awake (mcl.opencl.conditions.keep_awake: a launch on an idle
    device is profiled with the device's waking, 3 us of gesummv's 38 on an H200).
    Four ways, best first:

    * ``kernel.prepared(**args)`` (mcl.opencl.runtime.Kernel): its launch, enqueued
      without the checks of a call;
    * ``kernel.enqueue(**args) -> cl.Event`` when the runtime offers it;
    * the kernel's ``plan`` (mcl.opencl.plan.LaunchPlan) and ``source``: we build the
      source with the plan's options and enqueue it ourselves;
    * markers enqueued around a call of the kernel (includes launch overhead).
    """

    def __init__(self, kernel, args: dict, device: str | None):
        import pyopencl as cl
        import pyopencl.array as cla

        from mcl.opencl.device import runtime

        self.cl, self.kernel = cl, kernel
        rt = getattr(kernel, "runtime", None) or runtime(device)
        self.queue = rt.queue
        self.args = {k: (cla.to_device(self.queue, np.ascontiguousarray(v))
                         if isinstance(v, np.ndarray) and v.ndim > 0 else v)
                     for k, v in call_arguments(kernel, args).items()}
        self._device_outputs(kernel, cla)
        self.method, self._run = self._choose(rt)
        from mcl.opencl.conditions import keep_awake
        self.before = keep_awake(rt.context, self.queue)

    def _device_outputs(self, kernel, cla) -> None:
        """Device arrays for the buffers the inputs leave out (the outputs): without
        them every call makes host-backed buffers, and on the H100 the kernel's own
        profiled time grew by 17 us for black_scholes (38.6 -> 55.6 us) and 19 us
        for vector_add."""
        plan = getattr(kernel, "plan", None)
        if plan is None or not hasattr(kernel, "sizes"):
            return
        from mcl.opencl.plan import evaluate
        env = kernel.sizes(self.args)
        for a in plan.arguments:
            if a.kind == "buffer" and a.name not in self.args:
                shape = tuple(evaluate(e, env) for e in a.shape)
                self.args[a.name] = cla.zeros(self.queue, shape, np.dtype(a.dtype))

    def _choose(self, rt) -> tuple[str, Callable[[], float]]:
        prepared = getattr(self.kernel, "prepared", None)
        if callable(prepared):
            launch, _, _ = prepared(**self.args)

            def run() -> float:
                event = launch()
                event.wait()
                return _profile_seconds(event)
            return "prepared launch event", run
        enqueue = getattr(self.kernel, "enqueue", None)
        if callable(enqueue):
            return "kernel.enqueue event", lambda: _profile_seconds(enqueue(**self.args))
        if hasattr(self.kernel, "last_event"):  # mcl.opencl.runtime.Kernel
            return "kernel.last_event", self._last_event
        plan, source = getattr(self.kernel, "plan", None), getattr(self.kernel, "source", None)
        if plan is not None and isinstance(source, str):
            try:
                return "launch-plan event", self._plan_launch(rt, plan, source)
            except Exception as e:  # fall back, but say why in the results
                self.plan_error = short_error(e)
        return "markers around call", self._markers

    def _plan_launch(self, rt, plan, source: str) -> Callable[[], float]:
        from mcl.opencl.device import build_program
        from mcl.opencl.plan import evaluate

        env = {k: v for k, v in self.args.items() if np.isscalar(v)}
        options = list(plan.build_options) + [
            f"-D{c.name}={int(self.args[c.name])}" for c in plan.compile_time]
        program = build_program(rt.context, source, options, origin=plan.mcpl)
        knl = getattr(program, plan.kernel)
        values = []
        for a in plan.arguments:
            v = self.args[a.name]
            values.append(v.data if a.kind == "buffer" else np.dtype(a.dtype).type(v))
        gsize = tuple(evaluate(e, env) for e in plan.global_size)
        lsize = tuple(evaluate(e, env) for e in plan.local_size) or None
        return lambda: _profile_seconds(knl(self.queue, gsize, lsize, *values))

    def _last_event(self) -> float:
        self.kernel(**self.args)
        return _profile_seconds(self.kernel.last_event)

    def _markers(self) -> float:
        cl = self.cl
        before = cl.enqueue_marker(self.queue)
        self.kernel(**self.args)
        after = cl.enqueue_marker(self.queue)
        after.wait()
        return (after.profile.end - before.profile.end) * 1e-9

    def __call__(self) -> float:
        self.before()
        return self._run()


def time_repeatedly(run: Callable[[], float], warmup: int, repeats: int,
                    slow_s: float = 2.0, budget_s: float = float("inf")) -> dict:
    """Median and minimum of ``repeats`` timed runs after ``warmup`` untimed ones; a
    kernel slower than ``slow_s`` gets three runs (a naive version at paper size), and
    no more runs than fit in ``budget_s`` (the first one always runs)."""
    first = run()
    if first > 5 * slow_s or budget_s < 2 * first:  # one more run is enough / fits
        return {"median_s": first, "min_s": first, "max_s": first, "repeats": 1, "warmup": 0}
    warm = max(0, warmup - 1) if first <= slow_s else 0
    n = 3 if first > slow_s else repeats
    fits = int((budget_s - first) / first) if first > 0 else n + warm
    warm = min(warm, max(0, fits - 1))
    n = max(1, min(n, fits - warm))
    for _ in range(warm):
        run()
    times = [run() for _ in range(n)]
    return {"median_s": statistics.median(times), "min_s": min(times), "max_s": max(times),
            "repeats": n, "warmup": 1 + warm}


def fresh(args: dict) -> dict:
    """A copy of the inputs (outputs that accumulate must start from zero each time)."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}


# ----------------------------------------------------------------------------- fitting the size

class RunInputs:
    """The inputs of one problem size and of the smaller sizes of its ladder (made
    once, shared by the versions), and the numpy references for them."""

    def __init__(self, ref, index: int, sizes: dict, args: dict, metric: str):
        self.ref, self.index, self.metric = ref, index, metric
        self.sizes = sizes
        self._args = {self.key(sizes): args}
        self._work: dict[tuple, float] = {}
        self._expected: dict[tuple, dict] = {}
        self.reference_s: dict[tuple, float] = {}

    @staticmethod
    def key(sizes: dict) -> tuple:
        return tuple(sorted(sizes.items()))

    @property
    def paper(self) -> dict:
        return self._args[self.key(self.sizes)]

    def get(self, sizes: dict) -> dict:
        k = self.key(sizes)
        if k not in self._args:
            seed = [10, self.index] + [int(v) for v in sizes.values()
                                       if isinstance(v, int | np.integer)]
            self._args[k] = self.ref.inputs(np.random.default_rng(seed), **sizes)
        return self._args[k]

    def work(self, sizes: dict) -> float:
        k = self.key(sizes)
        if k not in self._work:
            try:  # most references need only the sizes: no inputs are made
                self._work[k] = work_of(self.ref, dict(sizes), self.metric)
            except TypeError:  # a figure that depends on the inputs (nnz)
                self._work[k] = work_of(self.ref, self.get(sizes), self.metric)
        return self._work[k]

    def expected(self, sizes: dict) -> dict:
        k = self.key(sizes)
        if k not in self._expected:
            t0 = time.perf_counter()
            self._expected[k] = self.ref.reference(**fresh(self.get(sizes)))
            self.reference_s[k] = time.perf_counter() - t0
        return self._expected[k]


def choose_size(kernel, keys: tuple[str, ...], need: dict, inputs: RunInputs,
                opts: argparse.Namespace) -> dict:
    """The size to measure a version at (see ``fit_size``), with the probe runs."""
    # from 1/65536 of the work in steps of at most 64x: one run of the perfect reduction
    # at 1/256 of 2^28 elements already takes 40 s (contended atomics)
    rungs = size_ladder(inputs.sizes, keys, need, fraction=2.0 ** -16)

    def measure(i: int) -> float:
        run = opts.timer(kernel, inputs.get(rungs[i]), opts.device)
        t = run()
        if t < 0.5:  # the first run may pay one-time costs (a build for this size)
            t = min(t, run())
        return t

    fit = fit_size(measure, lambda i: inputs.work(rungs[i]), len(rungs), opts.max_version_s,
                   max_step=64.0)
    fit["sizes"] = rungs[fit["rung"]]
    fit["probes"] = [{"sizes": rungs[i], "s": t} for i, t in fit["probes"]]
    return fit


def run_version(v: dict, ref, inputs: RunInputs, keys: tuple[str, ...],
                opts: argparse.Namespace) -> tuple[dict, dict | None, dict]:
    """Compile one version, check it at reference.SIZES, choose the size to measure it
    at (the paper size unless one run is predicted to exceed --max-version-s), run it
    once there (outputs returned for verification) and time it. Returns the entry,
    the outputs (None where it did not run) and the sizes it ran at."""
    out = dict(v)
    sizes = inputs.sizes
    need = getattr(ref, "DIVISIBLE_BY", {}).get(v["version"], {})
    bad = divisibility_problems(need, sizes)
    if bad:
        out.update(status="skipped", reason="needs " + ", ".join(bad))
        return out, None, sizes
    t0 = time.perf_counter()
    try:
        for_sizes = written_for_sizes(ROOT / v["file"], vars(ref))
        if for_sizes:
            out["specialized"] = True   # written for sizes known when it is built
        kernel = opts.compile(ROOT / v["file"], opts.device, opts.specialize or for_sizes,
                              **({"fast_math": True} if opts.fast_math else {}))
        if opts.fast_math:
            out["fast_math"] = True
    except Exception as e:
        out.update(status="not compiled", reason=short_error(e))
        return out, None, sizes
    out["compile_s"] = time.perf_counter() - t0
    out["small_sizes"] = verify_small_sizes(kernel, ref, v["version"])
    spent = 0.0
    try:
        fit = choose_size(kernel, keys, need, inputs, opts)
        spent += sum(p["s"] for p in fit["probes"])
        out["size_probe"] = {k: fit[k] for k in ("probes", "predicted_s")}
        if fit["sizes"] != sizes:
            sizes = fit["sizes"]
            out["sizes"] = sizes
            out["reduced"] = {
                "paper_sizes": inputs.sizes, "predicted_paper_s": fit["predicted_s"],
                "max_version_s": opts.max_version_s,
                "reason": f"one run at the paper size is predicted to take "
                          f"{fit['predicted_s']:.3g} s (> --max-version-s "
                          f"{opts.max_version_s:g}); measured at the largest size of the "
                          f"ladder predicted to fit"}
    except Exception as e:  # the probe failed: the paper size as before
        out["size_probe"] = {"error": short_error(e)}
    args = inputs.get(sizes)
    if "reduced" in out:
        out["roofline"] = roofline(ref, args)  # reference.py figures at the measured size
        out["work"] = {"flops": out["roofline"]["flops"], "bytes": out["roofline"]["bytes"]}
    try:
        t0 = time.perf_counter()
        result = kernel(**call_arguments(kernel, fresh(args)))
        outputs = outputs_of(result, tuple(ref.OUTPUTS))
        first_s = time.perf_counter() - t0
    except Exception as e:
        out.update(status="failed", reason="run: " + short_error(e))
        return out, None, sizes
    out["first_run_s"] = first_s
    spent += first_s
    if first_s > opts.too_slow_s:
        # A version slower than predicted: its one run, wall clock, is an upper bound.
        out["timing"] = {"median_s": first_s, "min_s": first_s, "repeats": 1,
                         "method": "wall clock of the first run (too slow to repeat; "
                                   "includes transfers)"}
        out["status"] = "ok"
        return out, outputs, sizes
    try:
        launcher = opts.timer(kernel, args, opts.device)
        out["timing"] = time_repeatedly(launcher, opts.warmup, opts.repeats,
                                        budget_s=max(0.0, opts.max_version_s - spent))
        out["timing"]["method"] = getattr(launcher, "method", "timer")
        if hasattr(launcher, "plan_error"):
            out["timing"]["plan_error"] = launcher.plan_error
        out["status"] = "ok"
    except Exception as e:
        out.update(status="failed", reason="timing: " + short_error(e))
    finally:
        del kernel
    return out, outputs, sizes


# ----------------------------------------------------------------------------- references

def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def time_torch(torch, make: Callable, args: dict, warmup: int, repeats: int) -> dict:
    # each call queued behind a busy GPU, as the Launcher times the MCL kernels
    awake = load_module(ROOT / "benchmarks" / "gpu_env.py", "gpu_env").torch_awake
    fn = make(torch, args)
    for _ in range(max(1, warmup)):
        fn()
    torch.cuda.synchronize()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(repeats):
        awake(torch)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e-3)
    return {"median_s": statistics.median(times), "min_s": min(times), "repeats": repeats,
            "method": "CUDA events, behind torch.cuda._sleep"}


def references(case: Case, args: dict, opts: argparse.Namespace) -> list[dict]:
    torch = torch_or_none()
    out = []
    for name, make in case.torch_refs.items():
        entry: dict[str, Any] = {"name": name, "kind": "torch",
                                 "primary": name == case.primary_ref}
        if torch is None:
            entry.update(status="unavailable", reason="torch with CUDA is not installed here")
        else:
            try:
                entry["timing"] = time_torch(torch, make, args, opts.warmup, opts.repeats)
                entry["status"] = "ok"
            except Exception as e:
                entry.update(status="failed", reason=short_error(e))
            finally:
                torch.cuda.empty_cache()
        out.append(entry)
    return out


def reduce_baselines(args: dict, opts: argparse.Namespace) -> list[dict]:
    """reduce0..reduce6: the OpenCL kernels of the Lift benchmarks
    (benchmarks/lift/reduce_baselines.cl, run by ``baseline_reductions`` of
    benchmarks/lift/run_all.py: every pass of a full reduction, checked against
    numpy, then timed)."""
    from mcl.opencl.device import runtime

    names = [f"reduce{i}" for i in range(7)]
    try:
        lift = load_module(ROOT / "benchmarks" / "lift" / "run_all.py", "lift_run_all")
        measured = lift.baseline_reductions(runtime(opts.device), args["input"],
                                            repeat=max(3, opts.repeats))
    except Exception as e:
        return [{"name": n, "kind": "baseline", "status": "failed", "reason": short_error(e)}
                for n in names]
    out = []
    for n in names:
        m = measured[n]
        out.append({"name": n, "kind": "baseline", "value": m["value"],
                    "status": "ok" if m["correct"] else "wrong",
                    "timing": {"median_s": m["time_s"], "method": "benchmarks/lift"}})
    return out


def copy_ceiling(opts: argparse.Namespace, which: str) -> dict:
    """The bandwidth ceiling of benchmarks/gpu_env.py, measured in this run:
    ``which`` is "opencl_copy" (phase 1) or "torch_copy" (phase 2)."""
    gpu_env = load_module(ROOT / "benchmarks" / "gpu_env.py", "gpu_env")
    nbytes = (16 if opts.quick else 1024) * 2 ** 20
    try:
        return getattr(gpu_env, which)(nbytes, repeats=max(3, opts.repeats))
    except Exception as e:
        return {"status": "failed", "reason": short_error(e)}


def roofline(ref, args: dict) -> dict:
    """The compulsory flops and bytes of reference.py (the figures of merit) against
    the target's peak figures in its hardware description. ``use_analyses_bound``
    replaces ``bound_s`` by the analyses' bound of the perfect version where it has one."""
    flops = int(ref.flops(**args)) if hasattr(ref, "flops") else 0
    nbytes = int(ref.bytes_moved(**args)) if hasattr(ref, "bytes_moved") else 0
    out: dict[str, Any] = {"flops": flops, "bytes": nbytes}
    try:
        from mcl.hdl import load_hardware
        hw = load_hardware(TARGET)
        peak, bandwidth = float(hw.peak_flops()), float(hw.memory_bandwidth("global"))
        out.update(peak_flops=peak, bandwidth=bandwidth,
                   source=f"reference.py flops/bytes against hdl:{TARGET} peak figures",
                   bound_s=max(flops / peak, nbytes / bandwidth))
        out["bound_by"] = "compute" if flops / peak > nbytes / bandwidth else "memory"
    except Exception as e:
        out["error"] = short_error(e)
    return out


_CHECKED: dict[str, Any] = {}


def _checked_for_target(path: Path):
    """The version translated to the target (as mcl.compile does) and checked, once
    per file."""
    key = str(path)
    if key not in _CHECKED:
        from mcl.mcpl.resolve import check
        from mcl.translate import translate
        _CHECKED[key] = check(translate(str(path), TARGET))
    return _CHECKED[key]


def analyses_roofline(path: Path, args: dict) -> dict:
    """The roofline of mcl.analyses (``roofline(function, checked, values,
    hardware=None)``) for the version translated to the target, at the measured
    sizes. ``bound_s`` is the time at the attainable rate if every access the version
    makes goes to global memory (its own traffic: pessimistic); ``compulsory_bound_s``
    if every array element crosses the memory interface once (optimistic)."""
    try:
        from mcl.analyses import roofline as analysis
        checked = _checked_for_target(path)
        [function] = [f for f in checked.module.functions
                      if checked.hardware_of(f) is not None][-1:]
        names = {p.name for p in function.params}
        values = {k: int(v) for k, v in args.items()
                  if k in names and isinstance(v, int | np.integer)}
        r = analysis(function, checked, values)
    except Exception as e:
        return {"error": short_error(e)}
    if r is None:
        return {"error": "no roofline: the analyses have no number for the operations or the "
                         "bytes at these sizes (data-dependent loop bounds, or no operations)"}
    return {"flops": r.flops, "bytes": r.bytes, "compulsory_bytes": r.compulsory_bytes,
            "intensity": r.intensity, "bound": r.bound, "best_bound": r.best_bound,
            "peak_flops": r.peak_flops, "bandwidth": r.bandwidth, "space": r.space,
            "attainable_flops": r.attainable, "best_attainable_flops": r.best_attainable,
            "bound_s": r.flops / r.attainable, "compulsory_bound_s": r.flops / r.best_attainable,
            "source": f"mcl.analyses.roofline on the version translated to {TARGET}"}


# ----------------------------------------------------------------------------- driver

def use_analyses_bound(roof: dict, analyses: dict) -> None:
    """Replace the bound of reference.py's figures in ``roof`` by the compulsory bound of
    mcl.analyses (``compulsory_bound_s``, flops / best attainable rate). Its label is
    the analyses' ``best_bound`` — the one that belongs to that bound; ``bound`` is the
    label of the pessimistic bound (every access to global memory), which is
    "bandwidth" for a matmul whose compulsory bound is the compute bound."""
    if "compulsory_bound_s" not in analyses:
        return
    roof["reference_bound_s"] = roof.get("bound_s")
    roof["bound_s"] = analyses["compulsory_bound_s"]
    best = analyses.get("best_bound")
    if best is None and analyses.get("peak_flops"):  # results of an older analyses
        best = ("compute" if analyses["flops"] / analyses["peak_flops"]
                >= analyses["compulsory_bound_s"] * (1 - 1e-9) else "bandwidth")
    roof["bound_by"] = "compute" if best == "compute" else "memory"
    roof["bound_flops"] = analyses.get("flops")
    roof["bound_peak_flops"] = analyses.get("peak_flops")
    roof["source"] = ("mcl.analyses.roofline of the perfect version translated to "
                      f"{TARGET} (compulsory traffic)")


def verify_entry(entry: dict, outputs: dict | None, ref, inputs: RunInputs,
                 sizes: dict) -> None:
    """Verification right after the measurement (a run cut short keeps it), against
    reference.py at the size the version ran at, and the analyses' roofline there."""
    entry["analyses_roofline"] = analyses_roofline(ROOT / entry["file"], inputs.get(sizes))
    if outputs is None:
        return
    try:
        entry["verification"] = verify(outputs, inputs.expected(sizes), ref.TOLERANCE)
    except Exception as e:
        entry["verification"] = {"ok": False, "error": short_error(e)}
    if not entry["verification"]["ok"] and entry.get("status") == "ok":
        entry.update(status="wrong", reason="results differ from reference.py")


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
            entry, got, ran_at = run_version(v, ref, inputs, case.scale, opts)
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
