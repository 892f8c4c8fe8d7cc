"""``versions(path)``: the whole job of ``mcl versions`` as one value (the versions and
their tree, the steps, the verification and the timings) for the CLI, the report and
tools."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcl.diagnostics import Diagnostic
from mcl.versions import discover
from mcl.versions.discover import VersionSet
from mcl.versions.steps import Step, steps
from mcl.versions.timing import Timing, measure, rooflines, timing_sizes
from mcl.versions.verify import Verification, verify


@dataclass
class Result:
    versions: VersionSet
    steps: list[Step] = field(default_factory=list)
    verification: Verification | None = None
    timings: dict[str, Timing] = field(default_factory=dict)
    timing_sizes: dict[str, int | float] = field(default_factory=dict)
    seconds: float = 0.0
    cold: bool = False      # each timed launch after a flush of the device's caches
    described: str | None = None   # the level whose target file describes the device

    @property
    def device_level(self) -> str | None:
        """The level that describes the device where some version's bound and prediction
        were made at it (the versions at and above it), else None."""
        level = self.described
        return level if any(t.at == level for t in self.timings.values()) else None

    @property
    def launches(self) -> str:
        """How the timed launches found the caches: "cold" or "warm"."""
        return "cold" if self.cold else "warm"

    @property
    def problems(self) -> list[Diagnostic]:
        extra = self.verification.problems if self.verification else []
        return self.versions.all_problems + extra

    @property
    def failed(self) -> bool:
        """Errors in the input, or a version that disagrees with the reference."""
        return any(p.is_error for p in self.problems) or bool(
            self.verification and self.verification.inconsistent)

    def depth(self, name: str) -> int:
        d, v = 0, self.versions.get(name)
        while v is not None and v.parent is not None and d < 100:
            d, v = d + 1, self.versions.get(v.parent)
        return d

    def to_json(self) -> dict:
        vs = self.versions
        return {
            "source": vs.source, "kernel": vs.kernel, "seconds": round(self.seconds, 3),
            "versions": [{"name": v.name, "file": v.file, "level": v.level,
                          "parent": v.parent, "why_parent": v.why_parent,
                          "commit": v.commit, "usable": v.usable,
                          "why_unusable": v.why_unusable, "other_kernel": v.other_kernel}
                         for v in vs.versions],
            "steps": [s.to_json() for s in self.steps],
            "verification": self.verification.to_json() if self.verification else None,
            "timing_sizes": self.timing_sizes,
            "timings": [t.to_json() for t in self.timings.values()],
            "problems": [p.to_json() for p in self.problems],
        }


def versions(path: str | Path | list[str | Path], *, sizes: str = "small", seed: int = 0,
             device: str | None = None, target: str | None = None, git: bool | None = None,
             time_it: bool | None = None, repeat: int = 10, cold: bool = True,
             timing_values: dict[str, int | float] | None = None,
             search_path: tuple[str, ...] = (), progress: Any = None) -> Result:
    """Discover the versions, diff every step, verify them against each other on the
    device and, on a GPU (or with ``time_it``), time them: ``cold``, each launch after a
    flush of the device's caches (the launch the predicted time is for), else each as
    the previous one left them."""
    start = time.perf_counter()
    say = progress or (lambda _msg: None)
    if isinstance(path, list | tuple):
        vs = discover.from_given(list(path), search_path=search_path) if len(path) > 1 else \
            discover.from_path(path[0], git=git, search_path=search_path)
    else:
        vs = discover.from_path(path, git=git, search_path=search_path)
    result = Result(vs)
    if vs.versions:
        say(f"{len(vs.versions)} versions of '{vs.kernel}' in {vs.source}")
    else:
        result.seconds = time.perf_counter() - start
        return result
    top = discover.highest(vs)
    if top is not None:   # a wrong --sizes is reported before any work is done
        from mcl.versions.sizes import check_set, folder_of, load_reference, size_sets
        size_sets(sizes, top.function_node, load_reference(folder_of(top.file)))
        check_set(timing_values or {}, [v.function_node for v in vs.versions if v.usable])
    result.timing_sizes = timing_sizes(vs, timing_values or {})
    result.steps = steps(vs, result.timing_sizes, progress=say)
    result.verification = verify(vs, sizes=sizes, seed=seed, device=device, target=target,
                                 search_path=search_path, progress=say)
    from mcl.opencl.target import described_by
    result.described = described_by(result.verification.device, search_path)
    result.timings = rooflines(vs, result.timing_sizes, result.described, search_path)
    want_time = result.verification.is_gpu if time_it is None else time_it
    if want_time:
        result.cold = cold
        measure(vs, result.verification.kernels, result.timings, result.timing_sizes,
                repeat=repeat, seed=seed, progress=say, cold=cold)
    result.seconds = time.perf_counter() - start
    return result
