"""What the hand-written probes of the GPU machine share (stream_probe.py,
dispatch_rate.py, atomic_rate.py, inflight_probe.py, ...): their command line (--out,
--repeats), NVIDIA's OpenCL device with a profiling queue, the launch times of a
kernel by OpenCL profiling events after a warm-up, a straight line through timings,
and the JSON file of their results (probe_sass.py: the SASS of their kernels)."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np


def nvidia_queue(script: str):
    """(device, context, profiling queue) of the first NVIDIA OpenCL device; None, with
    a message on stderr naming ``script``, where there is none."""
    import pyopencl as cl
    devs = [d for p in cl.get_platforms() if "NVIDIA" in p.name for d in p.get_devices()]
    return _profiling_queue(script, devs, "no NVIDIA OpenCL device (this probes the GPU "
                                          "machine's NVIDIA GPU)")


def _profiling_queue(script: str, devs: list, missing: str):
    """(device, context, profiling queue) of the first of ``devs``; None, with
    ``script``'s message ``missing`` on stderr, where there is none."""
    import pyopencl as cl
    if not devs:
        print(f"{script}: {missing}", file=sys.stderr)
        return None
    ctx = cl.Context([devs[0]])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    return devs[0], ctx, queue


def launch_times(queue, kernel, gsize, lsize, argv, repeats: int, warmup: int = 3,
                 before=None) -> list[float]:
    """Seconds of ``repeats`` launches of ``kernel`` (events), after ``warmup`` untimed;
    ``before``: what to enqueue ahead of each timed launch (a cache flush for a cold
    one, mcl.opencl.conditions.cache_flush)."""
    for _ in range(warmup):
        kernel(queue, gsize, lsize, *argv)
    out = []
    for _ in range(repeats):
        if before is not None:
            before()
        e = kernel(queue, gsize, lsize, *argv)
        e.wait()
        out.append((e.profile.end - e.profile.start) * 1e-9)
    return out


def median_time(queue, kernel, gsize, lsize, argv, repeats: int, **kw) -> float:
    """The median of :func:`launch_times` (``kw``: its warmup and before)."""
    return statistics.median(launch_times(queue, kernel, gsize, lsize, argv, repeats, **kw))


def line_fit(points) -> tuple[float, float]:
    """(slope, value at 0) of the least-squares line through (x, seconds) points."""
    xs = np.array([p[0] for p in points], float)
    ys = np.array([p[1] for p in points], float)
    slope, fixed = np.polyfit(xs, ys, 1)
    return float(slope), float(fixed)


def save(out: Path | None, name: str, result: dict) -> None:
    """``result`` as JSON in ``out``/``name`` where the probe was given --out."""
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(json.dumps(result, indent=1) + "\n")


def cpu_queue(script: str):
    """(device, context, profiling queue) of the first CPU OpenCL device (PoCL), where
    a probe's kernels are checked; None, with a message naming ``script``, without one."""
    import pyopencl as cl
    devs = [d for p in cl.get_platforms() for d in p.get_devices()
            if d.type & cl.device_type.CPU]
    return _profiling_queue(script, devs, "no CPU OpenCL device")


def probe_setup(doc: str, script: str, repeats: int, extra=None, cpu_twin: bool = False):
    """(arguments, device, context, queue) of a probe whose docstring is ``doc``: its
    command line (--out DIR, --repeats N with ``repeats`` by default, and what ``extra``
    adds to the parser) and :func:`nvidia_queue`; None where there is no NVIDIA device.
    ``cpu_twin``: the probe also takes ``--device cpu``, its kernels on PoCL
    (:func:`cpu_queue`) at sizes of its choosing, to check them without the GPU."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repeats", type=int, default=repeats)
    if cpu_twin:
        ap.add_argument("--device", choices=["nvidia", "cpu"], default="nvidia",
                        help="cpu: the kernels on PoCL, checked (their times say nothing)")
    if extra is not None:
        extra(ap)
    args = ap.parse_args()
    found = cpu_queue(script) if getattr(args, "device", None) == "cpu" else nvidia_queue(script)
    return None if found is None else (args, *found)
