"""Per version: the roofline bound (the least time the description allows) and the
time ``mcl feedback`` predicts, at the level that describes the device the versions run
on where a target file says which (``describes``: h200 for an NVIDIA H200), else at
each version's own level; and, where the device is a GPU, the measured time (best of N
launches, profiling events)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from mcl.diagnostics import McplError
from mcl.versions import sizes as S
from mcl.versions.discover import VersionSet, highest


@dataclass
class Timing:
    version: str
    level: str | None
    flops: float | None = None
    bytes: float | None = None
    intensity: float | None = None        # flop per byte, every access to memory
    best_intensity: float | None = None   # flop per byte, compulsory traffic only
    peak_flops: float | None = None
    bandwidth: float | None = None
    bound_s: float | None = None          # roofline: least time on the level's hardware
    predicted_s: float | None = None      # the feedback's predicted time (feedback-time)
    measured_s: float | None = None
    note: str = ""
    at: str | None = None                 # the level of bound_s and predicted_s

    @property
    def measured_flops(self) -> float | None:
        if self.flops and self.measured_s:
            return self.flops / self.measured_s
        return None

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in (
            "version", "level", "flops", "bytes", "intensity", "best_intensity",
            "peak_flops", "bandwidth", "bound_s", "predicted_s", "measured_s", "note",
            "at")}


def timing_sizes(vs: VersionSet, given: dict[str, int | float]) -> dict[str, int | float]:
    """The highest version's parameter defaults (the sizes the author had in mind),
    overridden by ``given``."""
    top = highest(vs)
    out: dict[str, int | float] = {}
    f = top.function_node if top else None
    if f is not None:
        from mcl.mcpl import print_expr
        for p in f.params:
            if p.type.is_array or p.default is None:
                continue
            try:
                out[p.name] = int(print_expr(p.default), 0)
            except ValueError:
                continue
    out.update(given)
    return out


def rooflines(vs: VersionSet, values: dict[str, int | float], at: str | None = None,
              search_path: tuple[str, ...] = ()) -> dict[str, Timing]:
    """Each version's operation counts, roofline bound and predicted time at ``values``:
    at level ``at`` (the device's description) where the version's level is ``at`` or
    above it, else at the version's own level."""
    from mcl.analyses import roofline
    from mcl.hdl import hardware_library

    lib = hardware_library(search_path)
    out = {}
    for v in vs.versions:
        t = Timing(v.name, v.level)
        f = v.function_node
        if v.usable and f is not None:
            mine = {p.name: values[p.name] for p in f.params if p.name in values}
            below = at is not None and v.level in lib and at in lib and \
                lib.is_descendant(at, v.level)
            if below:
                # the version's own operations (its roofline diagnostic at its own level
                # gives them otherwise): those of the translation count its guards
                try:
                    r = roofline(f, v.checked, mine)
                except Exception as e:  # noqa: BLE001 - the analyses may not model every kernel
                    r, t.note = None, f"no roofline: {type(e).__name__}"
                if r is not None:
                    t.flops, t.bytes = r.flops, r.bytes
                    t.intensity, t.best_intensity = r.intensity, r.best_intensity
            _predicted(t, v, mine, at if below else v.level, search_path)
            if t.bound_s is None and not t.note:
                t.note = f"level '{t.at}' has no finite peak or bandwidth"
        out[v.name] = t
    return out


def _predicted(t: Timing, v: Any, values: dict, level: str, search_path) -> None:
    """The roofline bound and the predicted time of version ``v`` at ``level`` (its own,
    or one below it, the translation's) into ``t``, as ``mcl feedback`` gives them."""
    from mcl.analyses import feedback
    from mcl.analyses.level import feedback_at_level

    only = ("roofline", "time")
    try:
        found = feedback(v.checked, values=values, only=only) if level == v.level else \
            feedback_at_level(v.checked, level, values=values, only=only,
                              search_path=search_path).diagnostics
    except Exception as e:  # noqa: BLE001 - the analyses may not model every kernel
        t.note = f"no prediction at {level}: {type(e).__name__}"
        return
    t.at = level
    for d in found:
        if d.code == "feedback-roofline" and d.data.get("best_attainable"):
            data = d.data
            t.peak_flops, t.bandwidth = data.get("peak_flops"), data.get("bandwidth")
            t.flops, t.bytes = t.flops or data.get("flops"), t.bytes or data.get("bytes")
            t.intensity = t.intensity or data.get("intensity")
            t.best_intensity = t.best_intensity or data.get("best_intensity")
            if t.flops:
                t.bound_s = t.flops / data["best_attainable"]
        elif d.code == "feedback-time" and d.data.get("seconds"):
            t.predicted_s = d.data["seconds"]


def measure(vs: VersionSet, kernels: dict[str, Any], timings: dict[str, Timing],
            values: dict[str, int | float], *, repeat: int = 10, seed: int = 0,
            progress: Any = None, cold: bool = False) -> None:
    """Time every compiled version at ``values`` (best of ``repeat``) into ``timings``;
    ``cold``: each launch after a flush of the device's caches (mcl run --cold), the
    launch the feedback's predicted time is for."""
    from mcl.opencl.conditions import cache_flush
    if not kernels:
        return
    folder = S.folder_of(vs.versions[0].file)
    ref = S.load_reference(folder)
    top = highest(vs)
    plan = (kernels.get(top.name) if top else None) or next(iter(kernels.values()))
    plan = plan.plan
    sizes = S.SizeSet("timing", {k: v for k, v in values.items()
                                 if k in S.size_parameters(top.function_node)})
    data = S.make_inputs(sizes, plan, ref, np.random.default_rng(seed))
    for v in vs.versions:
        k = kernels.get(v.name)
        if k is None:
            continue
        why = S.divisibility_problem(v.name.split("@")[0], sizes, ref)
        if why:
            timings[v.name].note = f"not timed: {why}"
            continue
        if progress:
            progress(f"timing {v.name}")
        args = {n: x for n, x in data.items() if n in k.plan.parameters}
        try:
            before = cache_flush(k.context, k.queue) if cold else None
            timings[v.name].measured_s = k.time(repeat=repeat, before=before, **args)
        except McplError as e:
            timings[v.name].note = "not timed: " + e.diagnostics[0].message
