"""Device-memory traffic of one kernel run as a counter at kernel end sees it.

The compulsory traffic (each element of the parameters' arrays once, stats) is what
crosses the memory interface eventually. A cache in front of device memory that
writes back (an H100's L2) still holds some written lines when the kernel ends;
they reach device memory later, outside the kernel's time. Which ones depends on
the order in which lines were last used (the cache keeps the most recent):

* every block resident at once (one wave) writes its results after the loops that
  read, at the end of the kernel: the written lines are the most recent, and the cache keeps
  them up to its capacity;
* the reads stream (each element read once): the cache at kernel end holds the most
  recent lines of the mix of reads and writes, writes in their share of the traffic;
* the reads are reused by blocks in later waves: the reused data is always more
  recent than the results of earlier waves, and displaces them (none stays). An
  array is reused so where a read of it does not depend on every block index (matmul's
  ``a[i, k]`` is read by every block of a row of blocks); a block that reads its own
  elements again (softmax's passes over its row) or its neighbours' few (a stencil's
  halo) adds no lines the others' results would give way to: the reads stream
  (softmax_rows on the H200: 17.3 MB measured of 33.6 compulsory, its 16.8 MB of
  results left in the L2).

The capacity a kernel's lines get is half the cache's: the H100's L2 is two
partitions, and a line can be held in both (benchmarks/fidelity measured at most
~14-16 MB of the 50 MB left dirty at kernel end).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sympy

from mcl.analyses.stats import (
    _param_size,
    _product,
    element_bytes,
    main_space,
    read_and_written,
    view_bases,
)

if TYPE_CHECKING:
    from mcl.analyses.functions import KernelView

#: the share of a write-back cache's capacity a kernel's written lines can keep
_RETAINED_SHARE = 0.5
#: the share of the reads below which arrays that several blocks read count as no reuse
#: (gesummv's vector x, 16 kB against its 64 MB matrices, displaces nothing)
_SHARED_SHARE = 0.1


@dataclass
class Traffic:
    read_bytes: float        # compulsory reads
    written_bytes: float     # compulsory writes
    retained_bytes: float    # written lines still in the cache at kernel end
    how: str                 # which case of the module docstring applied

    @property
    def dram_bytes(self) -> float:
        """What device memory sees during the kernel."""
        return self.read_bytes + self.written_bytes - self.retained_bytes


def _num(e: Any) -> float | None:
    try:
        v = sympy.sympify(e)
        return float(v) if v.is_number and v.is_finite else None
    except (TypeError, ValueError, sympy.SympifyError):
        return None


def write_back_cache(hw: Any, space: str) -> Any | None:
    """The cache holding ``space`` with the largest capacity (the last level)."""
    caches = [m for m in hw.memories_holding(space)
              if getattr(m, "kind", None) == "cache" and isinstance(m.capacity, int | float)]
    return max(caches, key=lambda m: m.capacity) if caches else None


def dram_traffic(view: KernelView, occupancy: Any = None) -> Traffic | None:
    """The device-memory bytes of the numeric kernel of ``view`` (None without
    numbers); ``occupancy`` (mcl.analyses.occupancy) tells how many waves of blocks
    run."""
    k, hw = view.num, view.hardware
    space = main_space(k) if hw is not None else None
    if space is None:
        return None
    bases = view_bases(k)     # a write through a view writes the array it views
    read_names, written_names = read_and_written(k)
    read = written = 0.0
    sizes: dict[str, float] = {}    # bytes of each array of the space
    for p in k.function.params:
        if not p.type.is_array or (k.checked.space_of(p) or p.space) != space:
            continue
        size = _num(_param_size(k, _product(p.type.sizes)))
        if size is None:
            return None
        b = sizes[p.name] = size * element_bytes(p.type, k.checked)
        if p.name in written_names:
            written += b
        if p.name in read_names or p.name not in written_names:
            read += b       # an array both read and written crosses the interface twice
    cache = write_back_cache(hw, space)
    if cache is None or not written:
        return Traffic(read, written, 0.0, "no write-back cache" if cache is None
                       else "nothing written")
    capacity = _RETAINED_SHARE * float(cache.capacity)
    waves = _waves(view, occupancy)
    if waves is not None and waves <= 1 and not _writes_amid_reads(k, space):
        return Traffic(read, written, min(written, capacity), "one wave")
    shared = _shared_reads(view, occupancy, space, sizes, written_names, bases)
    if shared is None:
        return Traffic(read, written, 0.0, "reads not counted")
    if shared <= _SHARED_SHARE * read:
        return Traffic(read, written, min(written, capacity * written / (read + written)),
                       "streaming")
    return Traffic(read, written, 0.0, "reused reads")


def _shared_reads(view: KernelView, occupancy: Any, space: str, sizes: dict[str, float],
                  written_names, bases) -> float | None:
    """Bytes of the arrays of ``space`` (not written; ``sizes``: their bytes) that
    several blocks read: a read whose index does not depend on every block index of
    more than one block. None where the blocks are not known."""
    k, hw = view.num, view.hardware
    groups = hw.par_groups()
    group = hw.group_of_unit(occupancy.unit) if occupancy is not None else \
        (groups[0] if groups and groups[0].unit is not None else None)
    if group is None:
        return None
    blocks = [lp for lp in k.foreach_loops() if lp.group == group and lp.var
              and (_num(lp.trips) or 2) > 1]
    shared: set[str] = set()
    for acc in k.accesses:
        name = bases.get(acc.name, acc.name)
        if not acc.write and acc.space == space and name not in written_names \
                and any(lp.var not in acc.depends for lp in blocks):
            if name not in sizes:
                return None
            shared.add(name)
    return sum(sizes[name] for name in shared)


def _waves(view: KernelView, occupancy: Any) -> float | None:
    """Blocks of the kernel over the blocks the device keeps resident at once."""
    if occupancy is None or not occupancy.resident:
        return None
    pos = view.hardware.position(occupancy.holder)
    holders = pos.instances if pos is not None else None
    blocks = grid_units(view, occupancy.unit)
    if not isinstance(holders, int) or blocks is None:
        return None
    return blocks / (occupancy.resident * holders)


def grid_units(view: KernelView, unit: str) -> int | None:
    """How many units of par_unit ``unit`` (blocks) the kernel runs."""
    group = view.hardware.group_of_unit(unit)
    return view.group_size(group.name) if group is not None else None


def _writes_amid_reads(k: Any, space: str) -> bool:
    """Whether a write to ``space`` sits in a sequential loop that also reads it (a
    grid-stride loop writes while it reads, not at the end)."""
    for w in k.accesses:
        if not w.write or w.space != space:
            continue
        for lp in w.loops:
            if lp.kind != "foreach" and any(
                    not a.write and a.space == space and lp in a.loops for a in k.accesses):
                return True
    return False
