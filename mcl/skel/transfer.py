"""Moving a container's rows between the host and the devices (and, under MPI,
between ranks). Every movement is recorded in the devices' transfer log.

A redistribution first allocates and fills the new parts, and only then replaces
the old ones: a failure (out of device memory) leaves the container as it was."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from mcl.skel import context as _context
from mcl.skel.context import Devices, Transfer
from mcl.skel.errors import cl_failure, skel_error

if TYPE_CHECKING:
    from mcl.skel.container import Container


def _cl():
    global _pyopencl
    if _pyopencl is None:       # imported on first use (mcl.skel loads without OpenCL)
        import pyopencl
        _pyopencl = pyopencl
    return _pyopencl


_pyopencl = None


# ---- allocation

def allocate(devs: Devices, specs, row_bytes: int, what: str) -> list:
    """Buffers for the parts ``specs`` (None for empty parts and other ranks' parts),
    checked against the devices' memory first."""
    pooled = _from_pool(devs, specs, row_bytes)
    if pooled is not None:
        return pooled
    cl = _cl()
    need: dict[int, int] = {}
    for s in specs:
        if devs.is_local(s.device):
            need[s.device] = need.get(s.device, 0) + s.rows * row_bytes
    for g, nbytes in need.items():
        max_alloc, memory, _ = devs.limit(g)
        biggest = nbytes if nbytes <= max_alloc else max(
            (s.rows * row_bytes for s in specs if s.device == g), default=0)
        if biggest > max_alloc or nbytes > memory:
            raise skel_error("out-of-memory", f"{what} needs {_size(nbytes)} on "
                             f"{devs.name(g)}, which has {_size(memory)} "
                             f"(at most {_size(max_alloc)} in one buffer)",
                             hint="distribute the container over more devices (block) or "
                                  "make it smaller")
    out = []
    try:
        for s in specs:
            nbytes = s.rows * row_bytes
            if not nbytes or not devs.is_local(s.device):
                out.append(None)
                continue
            pooled = _pool.get((devs.generation, s.device, nbytes))
            out.append(pooled.pop() if pooled else
                       cl.Buffer(devs.context, cl.mem_flags.READ_WRITE, nbytes))
    except cl.Error as e:
        raise cl_failure(what, e, devs.name(s.device)) from e
    return out


def _from_pool(devs: Devices, specs, row_bytes: int) -> list | None:
    """Buffers for every part from the pool (a skeleton in a loop: its previous outputs'
    buffers, which need no memory check), or None (the pool is left as it was)."""
    gen, local = devs.generation, devs.ranks == 1
    out = []
    for s in specs:
        nbytes = (s.hi - s.lo) * row_bytes
        if not nbytes or not (local or devs.is_local(s.device)):
            out.append(None)
            continue
        free = _pool.get((gen, s.device, nbytes))
        if not free:
            for t, buf in zip(specs, out, strict=False):    # put back what was taken
                if buf is not None:
                    _pool[(gen, t.device, (t.hi - t.lo) * row_bytes)].append(buf)
            return None
        out.append(free.pop())
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


def release(devs: Devices, parts, row_bytes: int) -> None:
    """Give the buffers of a container that is going away back to the pool. A part's
    buffer holds its stored rows of ``row_bytes`` exactly (:func:`allocate` makes every
    part's buffer): its size is known without asking OpenCL (0.9 us a buffer on PoCL)."""
    if _context._generation != devs.generation:
        return                  # devices no longer in use: let the buffers go
    local = devs.ranks == 1
    for p in parts:
        s = p.spec
        if p.buffer is None or not (local or devs.is_local(s.device)):
            continue
        key = (devs.generation, s.device, (s.hi - s.lo) * row_bytes)
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
            between_devices(devs, src.device, src.buffer, (lo - src.base) * rb, device,
                            buffer, (lo - base) * rb, nbytes)
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


# ---- copies between the devices of this process
#
# Two ways, chosen by ``Devices.peer_copies``:
#
# * through host memory (the default for GPUs): the source's queue reads the rows into
#   pinned host memory, the destination's queue writes them from there. The host waits
#   for the read before it enqueues the write: a driver may take the data of a write
#   from host memory when the write is enqueued rather than when it runs (as CUDA does
#   for copies of up to 64 kB from pageable memory; the likely cause of the NaN halos
#   of the heat equation on two H100s when the write only waited for the read's
#   event), so the memory must hold the rows by then. Pinned memory (a mapped
#   ALLOC_HOST_PTR buffer) moved 26-27 GB/s on the GPU machine where pageable memory
#   moved 0.7 GB/s.
# * peer to peer: the source's queue copies the rows into a small buffer, which is
#   migrated to the destination and copied into place there. A copy between two large
#   buffers of different devices would make a driver move the whole buffers (NVIDIA's
#   OpenCL migrates them lazily: 41 s a call for the heat equation's halos); the small
#   buffer is the only memory object both devices touch.
#
# Either way every device's buffers are used by that device's queues only, and a
# staging object records the events of the commands that read it (``busy``): whoever
# fills it next waits for them. Staging objects are kept in ``Devices.staging`` for reuse.
#
# A Stencil's halo exchange through host memory runs on a second queue per device
# (``Devices.copy_queue``), ordered against the kernels by events (:class:`Fences`):
# the copies then overlap the kernel that computes the rest of the rows. In one queue
# every switch between a copy and a kernel cost 3-10 us on the H100 (an iteration of
# the heat equation on two GPUs took 173 us for 142 us of kernel; 153 us with the
# copies beside the kernel).

#: rows of a large copy move through two staging objects of this size, alternately
CHUNK = 16 << 20
STAGING_KEPT = 16


class _Pinned:
    """Pinned host memory of ``nbytes``: a mapped ALLOC_HOST_PTR buffer."""

    def __init__(self, devs: Devices, nbytes: int):
        cl = _cl()
        self.nbytes = nbytes
        self.buffer = cl.Buffer(devs.context, cl.mem_flags.READ_WRITE
                                | cl.mem_flags.ALLOC_HOST_PTR, max(nbytes, 1))
        self.array, _ = cl.enqueue_map_buffer(devs.queues[0], self.buffer,
                                              cl.map_flags.READ | cl.map_flags.WRITE, 0,
                                              (max(nbytes, 1),), np.uint8, is_blocking=True)
        self.busy: list = []


class _Carrier:
    """A small device buffer of ``nbytes`` that carries rows from one device to another."""

    def __init__(self, devs: Devices, nbytes: int):
        cl = _cl()
        self.nbytes = nbytes
        self.buffer = cl.Buffer(devs.context, cl.mem_flags.READ_WRITE, max(nbytes, 1))
        self.busy: list = []


def _take(devs: Devices, nbytes: int):
    free = devs.staging.get((devs.peer_copies, nbytes))
    if free:
        return free.pop()
    return (_Carrier if devs.peer_copies else _Pinned)(devs, nbytes)


def _give(devs: Devices, stage) -> None:
    free = devs.staging.setdefault((isinstance(stage, _Carrier), stage.nbytes), [])
    if len(free) < STAGING_KEPT:
        free.append(stage)


class DeviceCopy:
    """``nbytes`` from ``src_buf`` (at ``src_off``) on local device ``src`` to ``dst_buf``
    (at ``dst_off``) on local device ``dst`` through ``stage``, in two steps so that
    many copies run together: :meth:`start` enqueues the source side (after what the
    source's queue holds: the kernel that wrote the rows), :meth:`end` the destination
    side (before what the destination's queue gets next). Only ``nbytes`` move."""

    def __init__(self, devs: Devices, src: int, src_buf, src_off: int, dst: int, dst_buf,
                 dst_off: int, nbytes: int, stage):
        self.devs, self.stage, self.nbytes = devs, stage, nbytes
        self.src_q, self.dst_q = devs.queue(src), devs.queue(dst)
        self.src_device, self.dst_device = src, dst
        self.src_buf, self.src_off, self.dst_buf, self.dst_off = src_buf, src_off, dst_buf, \
            dst_off
        self.peer = isinstance(stage, _Carrier)
        self.view = None if self.peer else stage.array[:nbytes]
        self.started = None
        #: for a halo exchange through host memory beside the kernels: the devices'
        #: copy queues and their :class:`_DeviceFences` (set by HaloExchange)
        self.src_side = self.dst_side = self.src_fence = self.dst_fence = None

    # pyopencl's enqueue_copy chooses among these by the types of its arguments at
    # every call (2 us of Python on PoCL); a DeviceCopy knows which one it needs

    def start(self) -> None:
        """The source side, after what the source's queue holds."""
        cl = _cl()
        st = self.stage
        if self.peer:
            cl.enqueue_migrate_mem_objects(self.src_q, [st.buffer],
                                           cl.mem_migration_flags.CONTENT_UNDEFINED,
                                           wait_for=st.busy or None)
            self.started = cl._enqueue_copy_buffer(self.src_q, self.src_buf, st.buffer,
                                                   self.nbytes, self.src_off, 0, None)
        else:
            self.started = cl._enqueue_read_buffer(self.src_q, self.src_buf, self.view,
                                                   self.src_off, st.busy or None, False)

    def end(self, waited: bool = False):
        """The destination side, before what the destination's queue gets next;
        ``waited``: the host already waited for :meth:`start`'s command (a halo
        exchange waits once for all its copies). Returns the event of the command."""
        cl = _cl()
        st = self.stage
        if self.peer:
            cl.enqueue_migrate_mem_objects(self.dst_q, [st.buffer], 0,
                                           wait_for=[self.started])
            done = cl._enqueue_copy_buffer(self.dst_q, st.buffer, self.dst_buf, self.nbytes,
                                           0, self.dst_off, None)
        else:
            if not waited:
                self.started.wait()     # the rows are in host memory before the write exists
            done = cl._enqueue_write_buffer(self.dst_q, self.dst_buf, self.view, self.dst_off,
                                            None, False)
        self.started = None
        # the events replaced here are complete (the copy out waited for them); a
        # host-memory copy's event waits for itself when dropped (pyopencl)
        st.busy = [done]
        return done

    def read_beside(self, after) -> None:
        """Through host memory: the read on the source's copy queue, after ``after``
        (the kernel that wrote the rows) and the write that last read the staging
        memory."""
        self.started = _cl()._enqueue_read_buffer(self.src_side, self.src_buf, self.view,
                                                  self.src_off, [*self.stage.busy, after],
                                                  False)

    def write_beside(self, after):
        """Through host memory, once the host waited for :meth:`read_beside`'s read: the
        write on the destination's copy queue, after ``after`` (the kernels that still
        read the rows it overwrites are done). Returns its event, for the kernels that
        read the rows."""
        done = _cl()._enqueue_write_buffer(self.dst_side, self.dst_buf, self.view,
                                           self.dst_off, [after], False)
        self.started = None
        self.stage.busy = [done]
        return done


def between_devices(devs: Devices, src: int, src_buf, src_off: int, dst: int, dst_buf,
                    dst_off: int, nbytes: int) -> None:
    """Copy ``nbytes`` between buffers of two local devices (see above), in chunks of
    at most CHUNK bytes through two alternating staging objects."""
    chunk = min(nbytes, CHUNK)
    stages = [_take(devs, chunk) for _ in range(1 if nbytes <= chunk else 2)]
    try:
        for k, off in enumerate(range(0, nbytes, chunk)):
            cp = DeviceCopy(devs, src, src_buf, src_off + off, dst, dst_buf, dst_off + off,
                            min(chunk, nbytes - off), stages[k % len(stages)])
            cp.start()
            devs.queue(src).flush()
            cp.end()
            devs.queue(dst).flush()
    finally:
        for st in stages:
            _give(devs, st)


class _DeviceFences:
    """One device's events in the current iteration of a Stencil: its first and last
    kernel (None: none yet), and the halo writes into it that its next kernel waits
    for (None: nothing to wait for). Kernel launchers and halo exchanges keep the
    object of their device and read and set these at every iteration."""

    __slots__ = ("first", "last", "waits")

    def __init__(self):
        self.first = self.last = self.waits = None

    def write(self, event) -> None:
        """A halo write into the device: its next kernel waits for it."""
        if self.waits is None:
            self.waits = [event]
        else:
            self.waits.append(event)


class Fences:
    """The events that order a halo exchange on the copy queues against the kernels of
    an iteration (stencil.py): a :class:`_DeviceFences` per device."""

    def __init__(self):
        self.devices: dict[int, _DeviceFences] = {}

    def of(self, g: int) -> _DeviceFences:
        f = self.devices.get(g)
        if f is None:
            f = self.devices[g] = _DeviceFences()
        return f

    def new_iteration(self) -> None:
        for f in self.devices.values():
            f.first = f.last = None

    def settle(self, devs: Devices) -> None:
        """Writes no kernel waited for: later commands of their devices' queues wait."""
        cl = _cl()
        for g, f in self.devices.items():
            if f.waits:
                cl.enqueue_barrier(devs.queue(g), wait_for=f.waits)
            f.waits = None


class HaloExchange:
    """The halo exchange of an overlap-distributed container: every part's halo rows
    from the other parts' own rows, planned once. Used in three steps per exchange:
    :meth:`rows_read` says which own rows of a part the others read (a Stencil computes
    them first), :meth:`start` enqueues the copies out of a part once they are
    computed, :meth:`end` the copies into the halos (and the messages between MPI
    ranks); :meth:`close` returns the staging memory. With ``fences``, copies through
    host memory run on the devices' copy queues, ordered by those fences."""

    def __init__(self, c: Container, fences: Fences | None = None):
        devs = c._devs
        self.c, self.devs, self.fences = c, devs, fences
        rb = c.row_size * c.dtype.itemsize
        what = f"{c.kind} {c.shape}: halo rows of {c.distribution}"
        self.rb, self.what = rb, what
        self.copies: dict[int, list[DeviceCopy]] = {}   # by index of the source part
        self.local: list[DeviceCopy] = []
        self.logged: list[Transfer] = []
        self.remote: list = []          # copy_rows arguments, in the order all ranks use
        self.read: dict[int, list[tuple[int, int]]] = {}
        self.stages: list = []
        #: the local copies run beside the kernels (through host memory, with fences)
        self.beside = fences is not None and not devs.peer_copies
        index = {id(p): i for i, p in enumerate(c._parts)}
        cl = _cl()
        try:
            for p in c._parts:
                s = p.spec
                for lo, hi in ((s.lo, s.own_lo), (s.own_hi, s.hi)):
                    row = lo
                    while row < hi:
                        q = next(q for q in c._parts
                                 if q.spec.own_lo <= row < q.spec.own_hi)
                        end = min(hi, q.spec.own_hi)
                        self._plan(q, index[id(q)], p, row, end)
                        row = end
        except cl.Error as e:
            self.close()
            raise cl_failure("preparing the halo exchange", e, "the devices") from e
        for i, rows in self.read.items():
            self.read[i] = _merged(rows)

    def _plan(self, q, qi: int, p, lo: int, hi: int) -> None:
        devs, rb = self.devs, self.rb
        nbytes = (hi - lo) * rb
        if nbytes == 0:
            return
        self.read.setdefault(qi, []).append((lo, hi))
        src = _Source(q.device, q.spec.own_lo, q.spec.own_hi, q.buffer, q.spec.lo)
        if not (devs.is_local(q.device) and devs.is_local(p.device)) or q.device == p.device:
            self.remote.append((src, p.device, p.buffer, p.spec.lo, lo, hi))
            return
        stage = _take(devs, nbytes)
        self.stages.append(stage)
        cp = DeviceCopy(devs, q.device, q.buffer, (lo - q.spec.lo) * rb, p.device, p.buffer,
                        (lo - p.spec.lo) * rb, nbytes, stage)
        if self.beside:
            cp.src_side, cp.dst_side = devs.copy_queue(q.device), devs.copy_queue(p.device)
            cp.src_fence, cp.dst_fence = self.fences.of(q.device), self.fences.of(p.device)
        self.copies.setdefault(qi, []).append(cp)
        self.local.append(cp)
        self.logged.append(Transfer("device", devs.name(q.device), devs.name(p.device),
                                    nbytes, self.what, q.device, p.device,
                                    via_host=not devs.peer_copies))

    def rows_read(self, i: int) -> list[tuple[int, int]]:
        """Own rows of part ``i`` that other parts read, as sorted disjoint ranges."""
        return self.read.get(i, [])

    def start(self, i: int) -> None:
        """The copies out of part ``i`` (its rows just computed). Beside the kernels,
        they run on the device's copy queue after the kernel that computed the rows
        (the last one of its device so far), beside the kernels enqueued next."""
        cl = _cl()
        try:
            for cp in self.copies.get(i, ()):
                if not self.beside:
                    cp.start()
                    continue
                after = cp.src_fence.last
                if after is None:       # no kernel of the device yet: all its work so far
                    after = cl.enqueue_marker(cp.src_q)
                cp.read_beside(after)
        except cl.Error as e:
            raise cl_failure("exchanging halo rows", e, "the devices") from e

    def end(self) -> None:
        """The copies into the halos. Beside the kernels: on each destination's copy
        queue, after the first kernel of the iteration there (when it is done, so are
        the kernels that read the rows the copy overwrites), and the destination's
        next kernel waits for them (:meth:`_DeviceFences.write`)."""
        cl = _cl()
        devs = self.devs
        try:
            devs.flush()
            if not self.beside:
                # the host waits once, for every copy's read into host memory
                reads = [cp.started for cp in self.local if not cp.peer]
                if reads:
                    cl.wait_for_events(reads)
                for cp in self.local:
                    cp.end(waited=True)
                devs.flush()
            elif self.local:
                cl.wait_for_events([cp.started for cp in self.local])
                for cp in self.local:
                    f = cp.dst_fence
                    after = f.first
                    if after is None:   # no kernel of the device yet: all its work so far
                        after = cl.enqueue_marker(cp.dst_q)
                        cp.dst_q.flush()    # the write on the other queue waits for it
                    f.write(cp.write_beside(after))
                # only the copy queues got commands since the flush above: submit the
                # writes, which the destinations' next kernels wait for
                for cp in self.local:
                    cp.dst_side.flush()
            for args in self.remote:
                copy_rows(self.c, devs, *args, self.rb, self.what)
        except cl.Error as e:
            raise cl_failure("exchanging halo rows", e, "the devices") from e
        devs.log.extend(self.logged)
        for p in self.c._parts:
            p.halo_valid = True

    def close(self) -> None:
        for st in self.stages:
            _give(self.devs, st)
        self.stages = []

    def reopen(self) -> None:
        """Take staging memory again after :meth:`close` (the plan is used again)."""
        if self.stages:
            return
        for cp in self.local:
            cp.stage = _take(self.devs, cp.nbytes)
            cp.view = None if cp.peer else cp.stage.array[:cp.nbytes]
            self.stages.append(cp.stage)


def _merged(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[list[int]] = []
    for lo, hi in sorted(ranges):
        if out and lo <= out[-1][1]:
            out[-1][1] = max(out[-1][1], hi)
        else:
            out.append([lo, hi])
    return [(lo, hi) for lo, hi in out]


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
    release(devs, old, c.row_size * c.dtype.itemsize)
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
