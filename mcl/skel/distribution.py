"""Distributions: how a container's rows are placed on the devices.

``single(device)`` all rows on one device; ``copy()`` all rows on every device
(leaving it merges the copies with a user function, or keeps the first);
``block()`` contiguous disjoint row ranges, one per device; ``overlap(size)``
block rows plus ``size`` halo rows above and below, copied from the neighbours.
A vector's rows are its elements. Under MPI the devices are those of all ranks."""

from __future__ import annotations

import numbers
from dataclasses import dataclass


@dataclass(frozen=True)
class PartSpec:
    """Rows ``[own_lo, own_hi)`` belong to the part on global device ``device``; it
    stores ``[lo, hi)`` (the own rows plus halo rows)."""

    device: int
    own_lo: int
    own_hi: int
    lo: int
    hi: int

    @property
    def rows(self) -> int:
        return self.hi - self.lo


@dataclass(frozen=True)
class Distribution:
    kind: str                   # "single" | "copy" | "block" | "overlap"
    device: int = 0
    top: int = 0                # overlap: halo rows above / below each block
    bottom: int = 0
    merge: object = None        # copy: a UserFunction combining two copies, or None

    def layout(self) -> tuple:
        return (self.kind, self.device, self.top, self.bottom)

    def same_layout(self, other: Distribution | None) -> bool:
        return other is self or (other is not None and self.layout() == other.layout())

    def parts(self, rows: int, ndev: int) -> list[PartSpec]:
        if self.kind == "single":
            return [PartSpec(self.device, 0, rows, 0, rows)]
        if self.kind == "copy":
            return [PartSpec(d, 0, rows, 0, rows) for d in range(ndev)]
        out = []
        base, extra = divmod(rows, ndev)
        lo = 0
        for d in range(ndev):
            hi = lo + base + (1 if d < extra else 0)
            out.append(PartSpec(d, lo, hi, max(0, lo - self.top), min(rows, hi + self.bottom)))
            lo = hi
        return out

    def __str__(self) -> str:
        if self.kind == "single":
            return f"single({self.device})"
        if self.kind == "overlap":
            size = str(self.top) if self.top == self.bottom else f"{self.top}, {self.bottom}"
            return f"overlap({size})"
        return f"{self.kind}()"


def _whole(x) -> bool:
    """Whether ``x`` is a whole number of an integer type (numpy's too; not True)."""
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def single(device: int = 0) -> Distribution:
    """All rows on device ``device`` (the first by default)."""
    if not _whole(device):
        from mcl.skel.errors import skel_error
        raise skel_error("bad-distribution", f"single({device!r:.40}): a device is "
                         "numbered by an integer", hint="single(0) is the first device")
    return Distribution("single", device=int(device))


def copy(merge=None) -> Distribution:
    """All rows on every device. ``merge`` (OpenCL C source or a UserFunction of two
    elements) combines the copies when the distribution changes; without it the
    first device's copy is kept."""
    if merge is not None:
        from mcl.skel.functions import from_source
        merge = from_source(merge, "copy merge")
    return Distribution("copy", merge=merge)


def block() -> Distribution:
    """Contiguous row ranges, one per device (sizes differ by at most one row)."""
    return Distribution("block")


def overlap(size: int, bottom: int | None = None) -> Distribution:
    """Block rows plus ``size`` halo rows above and below (``bottom`` below, if given)."""
    from mcl.skel.errors import skel_error
    bottom = size if bottom is None else bottom
    if not _whole(size) or not _whole(bottom) or size < 0 or bottom < 0:
        raise skel_error("bad-distribution", f"overlap({size!r:.40}, {bottom!r:.40}) needs "
                         "non-negative whole numbers of halo rows")
    return Distribution("overlap", top=int(size), bottom=int(bottom))
