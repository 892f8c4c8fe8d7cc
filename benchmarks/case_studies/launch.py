"""One version of a case study, run: its arguments and outputs, verified against
reference.py (at the small test sizes and at the measured size), the size it is
measured at (the paper size unless one run is predicted to take too long) and its
time from OpenCL profiling events (``Launcher``, ``time_repeatedly``)."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np
from baselines import analyses_roofline, roofline
from mcpl_versions import ROOT, short_error

from mcl.opencl.sizing import divisibility_problems, fit_size, size_ladder, work_of
from mcl.versions.sizes import written_for_sizes

# ----------------------------------------------------------------------------- calling

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


# ----------------------------------------------------------------------------- timing

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
