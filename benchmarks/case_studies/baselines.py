"""What a version's time is compared with: the torch/cuBLAS/cuDNN references, the
reduce0..reduce6 baselines of benchmarks/lift, the copy ceiling of benchmarks/gpu_env.py,
the roofline of reference.py's figures and that of mcl.analyses for the version
translated to the target (``use_analyses_bound`` puts the latter in the former)."""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from cases import Case
from mcpl_versions import ROOT, TARGET, load_module, short_error

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


# ----------------------------------------------------------------------------- rooflines

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
