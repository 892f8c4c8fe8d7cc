"""Moving a container's rows between the host and the devices (and, under MPI,
between ranks). Every movement is recorded in the devices' transfer log.

A redistribution first allocates and fills the new parts, and only then replaces
the old ones: a failure (out of device memory) leaves the container as it was."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mcl.skel.context import Devices, Transfer
from mcl.skel.errors import cl_failure, skel_error

if TYPE_CHECKING:
    from mcl.skel.container import Container


def _cl():
    import pyopencl as cl
    return cl


# ---- allocation

def allocate(devs: Devices, specs, row_bytes: int, what: str) -> list:
    """Buffers for the parts ``specs`` (None for empty parts and other ranks' parts),
    checked against the devices' memory first."""
    cl = _cl()
    need: dict[int, int] = {}
    for s in specs:
        if devs.is_local(s.device):
            need[s.device] = need.get(s.device, 0) + s.rows * row_bytes
    for g, nbytes in need.items():
        dev = devs.device(g)
        biggest = max((s.rows * row_bytes for s in specs if s.device == g), default=0)
        if biggest > dev.max_mem_alloc_size or nbytes > dev.global_mem_size:
            raise skel_error("out-of-memory", f"{what} needs {_size(nbytes)} on "
                             f"{devs.name(g)}, which has {_size(dev.global_mem_size)} "
                             f"(at most {_size(dev.max_mem_alloc_size)} in one buffer)",
                             hint="distribute the container over more devices (block) or "
                                  "make it smaller")
    out = []
    try:
        for s in specs:
            nbytes = s.rows * row_bytes
            if not devs.is_local(s.device) or nbytes == 0:
                out.append(None)
                continue
            pooled = _pool.get((devs.generation, s.device, nbytes))
            out.append(pooled.pop() if pooled else
                       cl.Buffer(devs.context, cl.mem_flags.READ_WRITE, nbytes))
    except cl.Error as e:
        raise cl_failure(what, e, devs.name(s.device)) from e
    return out


#: buffers of dropped containers, by (devices generation, device, bytes): a skeleton
#: called in a loop reuses its previous output's buffers instead of allocating anew.
#: A buffer returns to the pool of the device whose in-order queue last used it, so
#: reusing it never races with that queue's pending commands.
_pool: dict[tuple[int, int, int], list] = {}
POOL_PER_SIZE = 4


def clear_pool() -> None:
    """Free every pooled buffer (mcl.skel.init chose other devices)."""
    _pool.clear()


def release(devs: Devices, parts) -> None:
    """Give the buffers of a container that is going away back to the pool."""
    for p in parts:
        if p.buffer is None or not devs.is_local(p.device):
            continue
        key = (devs.generation, p.device, p.buffer.size)
        from mcl.skel import context
        if context._generation != devs.generation:
            continue            # devices no longer in use: let the buffer go
        free = _pool.setdefault(key, [])
        if len(free) < POOL_PER_SIZE:
            free.append(p.buffer)


def _size(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if n < 1024 or unit == "TB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


# ---- moving rows

class _Source:
    """Valid rows ``[lo, hi)`` somewhere: on the host (device None) or in a buffer
    on global device ``device`` whose first row is ``base``."""

    def __init__(self, device, lo, hi, buffer=None, base=0):
        self.device, self.lo, self.hi, self.buffer, self.base = device, lo, hi, buffer, base


def _sources(c: Container) -> list[_Source]:
    out = []
    if c._host_valid:
        out.append(_Source(None, 0, c.rows))
    for p in c._parts:
        s = p.spec
        if p.valid and p.halo_valid:
            out.append(_Source(s.device, s.lo, s.hi, p.buffer, s.lo))
        elif p.valid:
            out.append(_Source(s.device, s.own_lo, s.own_hi, p.buffer, s.lo))
    return out


def _best(sources: list[_Source], device: int, row: int) -> _Source:
    candidates = [s for s in sources if s.lo <= row < s.hi]
    same = [s for s in candidates if s.device == device]
    host = [s for s in candidates if s.device is None]
    chosen = (same or host or candidates)
    if not chosen:
        raise AssertionError(f"row {row} is valid nowhere")   # a bug: every row is somewhere
    return chosen[0]


def fill(c: Container, devs: Devices, device: int, buffer, base: int, lo: int, hi: int,
         sources: list[_Source], what: str) -> None:
    """Make rows ``[lo, hi)`` of ``buffer`` (on global ``device``, first row ``base``)
    valid, taking each row range from the best source (same device, host, other)."""
    rb = c.row_size * c.dtype.itemsize
    row = lo
    while row < hi:
        src = _best(sources, device, row)
        end = min(hi, src.hi)
        copy_rows(c, devs, src, device, buffer, base, row, end, rb, what)
        row = end


def copy_rows(c, devs: Devices, src: _Source, device: int, buffer, base: int,
              lo: int, hi: int, rb: int, what: str) -> None:
    cl = _cl()
    nbytes = (hi - lo) * rb
    if nbytes == 0:
        return
    if src.device == device and src.buffer is buffer:
        return
    dst_local = devs.is_local(device)
    try:
        if src.device is None:
            if dst_local:
                host = c._host_array().reshape(c.rows, -1)[lo:hi]
                cl.enqueue_copy(devs.queue(device), buffer, np.ascontiguousarray(host),
                                dst_offset=(lo - base) * rb, is_blocking=True)
                devs.log.append(Transfer("upload", "host", devs.name(device), nbytes, what,
                                         None, device))
            return
        src_local = devs.is_local(src.device)
        if src_local and dst_local:
            if src.device == device:
                cl.enqueue_copy(devs.queue(device), buffer, src.buffer, byte_count=nbytes,
                                src_offset=(lo - src.base) * rb, dst_offset=(lo - base) * rb)
                return
            # between devices without stopping either: the copy waits for the source's
            # queue, and the source's queue waits for the copy before it goes on (it may
            # overwrite the rows next)
            src_q, dst_q = devs.queue(src.device), devs.queue(device)
            if devs.peer_copies:
                ready = cl.enqueue_marker(src_q)
                done = cl.enqueue_copy(dst_q, buffer, src.buffer, byte_count=nbytes,
                                       src_offset=(lo - src.base) * rb,
                                       dst_offset=(lo - base) * rb, wait_for=[ready])
            else:
                staging = np.empty(nbytes, np.uint8)
                read = cl.enqueue_copy(src_q, staging, src.buffer,
                                       src_offset=(lo - src.base) * rb, is_blocking=False)
                done = cl.enqueue_copy(dst_q, buffer, staging, dst_offset=(lo - base) * rb,
                                       wait_for=[read], is_blocking=False)
                _keep_alive(devs, done, staging)
            cl.enqueue_barrier(src_q, wait_for=[done])
            devs.log.append(Transfer("device", devs.name(src.device), devs.name(device),
                                     nbytes, what, src.device, device,
                                     via_host=not devs.peer_copies))
        elif src_local or dst_local:
            from mcl.skel import mpi
            tmp = np.empty(nbytes, np.uint8)
            if src_local:
                cl.enqueue_copy(devs.queue(src.device), tmp, src.buffer,
                                src_offset=(lo - src.base) * rb, is_blocking=True)
                mpi.send(devs, tmp, devs.owner(device))
                devs.log.append(Transfer("mpi", devs.name(src.device), devs.name(device),
                                         nbytes, what, src.device, device))
            else:
                mpi.recv(devs, tmp, devs.owner(src.device))
                cl.enqueue_copy(devs.queue(device), buffer, tmp,
                                dst_offset=(lo - base) * rb, is_blocking=True)
    except cl.Error as e:
        raise cl_failure(what, e, devs.name(device)) from e


def _keep_alive(devs: Devices, event, staging) -> None:
    """Keep ``staging`` (host memory of a copy in flight) until ``event`` completes."""
    cl = _cl()
    done = cl.command_execution_status.COMPLETE
    # copies finish about in order: drop finished ones from the front only (cheap)
    while devs.in_flight and devs.in_flight[0][0].get_info(
            cl.event_info.COMMAND_EXECUTION_STATUS) == done:
        devs.in_flight.pop(0)
    devs.in_flight.append((event, staging))


def materialize(c: Container, halo: bool) -> None:
    """Bring ``c``'s parts in line with its distribution (see the module docstring)."""
    from mcl.skel.container import Part
    devs = c._devs
    dist = c._dist
    if c._parts and dist.same_layout(c._placed) and all(
            p.valid and (p.halo_valid or not halo) for p in c._parts):
        return          # the common case of a skeleton in a loop: everything in place
    specs = dist.parts(c.rows, devs.count)
    current = [p.spec for p in c._parts]
    if current == specs and c._parts:
        sources = _sources(c)
        for p in c._parts:
            s = p.spec
            if not p.valid:
                fill(c, devs, s.device, p.buffer, s.lo, s.own_lo, s.own_hi, sources,
                     f"{c.kind} {c.shape}: rows of {dist} written on the host")
            if halo and not p.halo_valid:
                halo_what = f"{c.kind} {c.shape}: halo rows of {dist}"
                fill(c, devs, s.device, p.buffer, s.lo, s.lo, s.own_lo, sources, halo_what)
                fill(c, devs, s.device, p.buffer, s.lo, s.own_hi, s.hi, sources, halo_what)
        for p in c._parts:
            p.valid = True
            p.halo_valid = p.halo_valid or halo
        c._placed = dist
        return
    _merge_copies(c)
    before = "host" if not any(p.valid for p in c._parts) else str(c._placed)
    what = f"{c.kind} {c.shape}: {before} -> {dist}"
    sources = _sources(c)
    if not sources and c.rows:
        raise AssertionError("container data is valid nowhere")
    buffers = allocate(devs, specs, c.row_size * c.dtype.itemsize, what)
    for s, buf in zip(specs, buffers, strict=True):
        fill(c, devs, s.device, buf, s.lo, s.lo, s.hi, sources, what)
    old = c._parts
    c._parts = [Part(s, b, True, True) for s, b in zip(specs, buffers, strict=True)]
    release(devs, old)
    c._placed = dist


def _merge_copies(c: Container) -> None:
    """Leaving a copy distribution: combine the valid copies with the merge function
    of the distribution they were made under (or keep the first)."""
    parts = [p for p in c._parts if p.valid and p.spec.own_lo == 0 and p.spec.own_hi == c.rows]
    if len(parts) < 2 or c._host_valid:
        return
    merge = getattr(c, "_merge_from", None)
    keep = parts[0]
    if merge is not None and c.rows:
        from mcl.skel.skeletons import merge_into
        merge_into(c, merge, keep, parts[1:])
    for p in c._parts:
        if p is not keep:
            p.valid = p.halo_valid = False


def download(c: Container) -> None:
    """Make the host copy valid: own rows of each valid part (the first copy of a copy
    distribution), downloaded by the rank that holds them and, under MPI, broadcast."""
    cl = _cl()
    devs = c._devs
    if c.size == 0:
        return
    _merge_copies(c)
    host = c._host_array().reshape(c.rows, -1) if c.rows else c._host_array()
    rb = c.row_size * c.dtype.itemsize
    done = 0
    for p in c._parts:
        s = p.spec
        if not p.valid or s.own_hi <= done or s.own_hi == s.own_lo:
            continue
        lo = max(done, s.own_lo)
        view = host[lo:s.own_hi]
        if devs.is_local(s.device):
            try:
                tmp = np.empty(view.shape, c.dtype)
                cl.enqueue_copy(devs.queue(s.device), tmp, p.buffer,
                                src_offset=(lo - s.lo) * rb, is_blocking=True)
                view[...] = tmp
            except cl.Error as e:
                raise cl_failure("reading back to the host", e, devs.name(s.device)) from e
            devs.log.append(Transfer("download", devs.name(s.device), "host",
                                     (s.own_hi - lo) * rb, f"{c.kind} {c.shape}: {c._dist} -> host",
                                     s.device, None))
        if devs.ranks > 1:
            from mcl.skel import mpi
            mpi.bcast_rows(devs, view, devs.owner(s.device))
        done = s.own_hi
    if done < c.rows:
        raise AssertionError("rows missing when reading back")
