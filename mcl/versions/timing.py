"""Per version: the roofline of its own level (the least time the description allows,
and the time the analyses predict when every access goes to memory) and, where the
device is a GPU, the measured time (best of N launches, profiling events)."""

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
    predicted_s: float | None = None      # every access to memory (pessimistic)
    measured_s: float | None = None
    note: str = ""

    @property
    def measured_flops(self) -> float | None:
        if self.flops and self.measured_s:
            return self.flops / self.measured_s
        return None

    def to_json(self) -> dict:
        return {k: getattr(self, k) for k in (
            "version", "level", "flops", "bytes", "intensity", "best_intensity",
            "peak_flops", "bandwidth", "bound_s", "predicted_s", "measured_s", "note")}


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


def rooflines(vs: VersionSet, values: dict[str, int | float]) -> dict[str, Timing]:
    from mcl.analyses import roofline

    out = {}
    for v in vs.versions:
        t = Timing(v.name, v.level)
        f = v.function_node
        if v.usable and f is not None:
            mine = {p.name: values[p.name] for p in f.params if p.name in values}
            try:
                r = roofline(f, v.checked, mine)
            except Exception as e:  # noqa: BLE001 - the analyses may not model every kernel
                r, t.note = None, f"no roofline: {type(e).__name__}"
            if r is not None:
                t.flops, t.bytes = r.flops, r.bytes
                t.intensity, t.best_intensity = r.intensity, r.best_intensity
                t.peak_flops, t.bandwidth = r.peak_flops, r.bandwidth
                t.bound_s = r.flops / r.best_attainable
                t.predicted_s = r.flops / r.attainable
            elif not t.note:
                t.note = f"level '{v.level}' has no finite peak or bandwidth"
        out[v.name] = t
    return out


def measure(vs: VersionSet, kernels: dict[str, Any], timings: dict[str, Timing],
            values: dict[str, int | float], *, repeat: int = 10, seed: int = 0,
            progress: Any = None) -> None:
    """Time every compiled version at ``values`` (best of ``repeat``) into ``timings``."""
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
            timings[v.name].measured_s = k.time(repeat=repeat, **args)
        except McplError as e:
            timings[v.name].note = "not timed: " + e.diagnostics[0].message
