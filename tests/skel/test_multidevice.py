"""Copies between devices: halo exchanges and redistributions on 2 and 3 devices,
through pinned host memory and peer to peer, against numpy; the ordering that makes
them correct on drivers that take host data early; and that a call moves only rows
(never whole buffers) between devices."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.skel import transfer

HEAT = """float heat(float_matrix_t m) {
  float c = get(m, 0, 0);
  return c + 0.2f * (get(m, -1, 0) + get(m, 1, 0) + get(m, 0, -1) + get(m, 0, 1) - 4.0f * c);
}"""


def heat_ref(t, iterations):
    for _ in range(iterations):
        p = np.pad(t, 1, mode="edge")
        t = t + np.float32(0.2) * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:]
                                   - 4 * t)
    return t


def start(on_devices, n, peer):
    on_devices(n)
    return sk.init(num_devices=n, platform="Portable Computing Language", peer_copies=peer)


class EarlyHostReads:
    """pyopencl's enqueue_copy as a driver that takes the data of a write from host
    memory when the write is enqueued, not when it runs (NVIDIA's OpenCL does so for
    small writes): a copy between devices that enqueues the write before the read into
    the host memory has completed writes stale data."""

    def __init__(self, cl):
        self._cl = cl

    def __getattr__(self, name):
        return getattr(self._cl, name)

    def enqueue_copy(self, queue, dest, src, **kw):
        if isinstance(dest, self._cl.MemoryObjectHolder) and isinstance(src, np.ndarray):
            src = np.array(src, copy=True)      # the data as it is now
            kw["is_blocking"] = True            # and kept alive while the write runs
        return self._cl.enqueue_copy(queue, dest, src, **kw)

    def _enqueue_write_buffer(self, queue, mem, hostbuf, dst_offset=0, wait_for=None,
                              is_blocking=True):
        # the write a copy between devices enqueues itself
        return self._cl._enqueue_write_buffer(queue, mem, np.array(hostbuf, copy=True),
                                              dst_offset, wait_for, True)


@pytest.fixture
def early_host_reads(monkeypatch):
    import pyopencl as cl
    monkeypatch.setattr(transfer, "_cl", lambda: EarlyHostReads(cl))


@pytest.fixture(params=[0, None], ids=["edges-first", "one-kernel"], autouse=True)
def split(request, monkeypatch):
    """Stencil computes the rows other devices read first (large parts) or each part
    with one kernel (small parts): both, whatever the test's sizes."""
    if request.param is not None:
        monkeypatch.setattr(sk.Stencil, "split_from", request.param)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("peer", [False, True], ids=["via-host", "peer"])
def test_heat_halos_every_iteration(on_devices, early_host_reads, n, peer):
    start(on_devices, n, peer)
    t = np.zeros((37, 23), np.float32)
    t[5:20, 4:15] = 100.0
    t[30:, :] = 50.0
    st = sk.Stencil(HEAT, 1, sk.NEAREST, sync_every=1)
    m = sk.Matrix(t)
    for its in (40, 41):
        assert np.allclose(st(m, iterations=its).to_numpy(), heat_ref(t, its), atol=1e-3)
    st3 = sk.Stencil(HEAT, 1, sk.NEAREST, sync_every=3)
    assert np.allclose(st3(m, iterations=40).to_numpy(), heat_ref(t, 40), atol=1e-3)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("peer", [False, True], ids=["via-host", "peer"])
def test_redistributions_between_devices(on_devices, early_host_reads, n, peer, monkeypatch):
    start(on_devices, n, peer)
    monkeypatch.setattr(transfer, "CHUNK", 64)      # large copies in many chunks
    a = np.arange(4001, dtype=np.float32)
    v = sk.Map("float f(float x) { return x + 1.0f; }")(sk.Vector(a))
    v.distribution = sk.copy()
    w = sk.Map("float f(float x) { return x * 2.0f; }")(v)
    assert np.array_equal(w.to_numpy(), (a + 1) * 2)
    w.distribution = sk.single(n - 1)
    assert np.array_equal(sk.Map("float g(float x) { return -x; }")(w).to_numpy(),
                          -(a + 1) * 2)
    m = sk.Map("float f(float x) { return x; }")(sk.Matrix(a[:4000].reshape(100, 40)))
    out = sk.MapOverlap("float b(float_matrix_t m) { return get(m, -2, 0) + get(m, 2, 0); }",
                        2)(m)
    p = np.pad(a[:4000].reshape(100, 40), ((2, 2), (0, 0)))
    assert np.array_equal(out.to_numpy(), p[:-4] + p[4:])


class CopyRecorder:
    """Records, for every buffer, the devices whose queues copy from or into it."""

    def __init__(self, cl):
        self._cl = cl
        self.users: dict[int, set] = {}
        self.sizes: dict[int, int] = {}

    def __getattr__(self, name):
        return getattr(self._cl, name)

    def enqueue_copy(self, queue, dest, src, **kw):
        for b in (dest, src):
            if isinstance(b, self._cl.MemoryObjectHolder):
                self.users.setdefault(b.int_ptr, set()).add(queue.device.int_ptr)
                self.sizes[b.int_ptr] = b.size
        return self._cl.enqueue_copy(queue, dest, src, **kw)

    def _enqueue_write_buffer(self, queue, mem, hostbuf, dst_offset=0, wait_for=None,
                              is_blocking=True):
        # the write a copy between devices enqueues itself
        return self._cl._enqueue_write_buffer(queue, mem, np.array(hostbuf, copy=True),
                                              dst_offset, wait_for, True)


@pytest.mark.parametrize("peer", [False, True], ids=["via-host", "peer"])
def test_a_call_moves_only_halo_rows(on_devices, monkeypatch, peer):
    """No buffer larger than the halo rows is used by two devices' queues: a copy
    between two large buffers of different devices would make a GPU driver migrate
    the whole buffer (41 s a call for the heat equation on two H100s)."""
    import pyopencl as cl
    devs = start(on_devices, 2, peer)
    rec = CopyRecorder(cl)
    monkeypatch.setattr(transfer, "_cl", lambda: rec)
    t = np.random.default_rng(0).random((64, 32)).astype(np.float32)
    st = sk.Stencil(HEAT, 1, sk.NEAREST)
    m = sk.Matrix(t)
    m.distribution = sk.overlap(1)
    m._ensure(halo=True)
    start_log = len(devs.log)
    out = st(m, iterations=5)
    moved = [x for x in devs.log[start_log:] if x.kind == "device"]
    row = 32 * 4
    assert len(moved) == 2 * 4 and all(x.nbytes == row for x in moved)
    shared = {b: users for b, users in rec.users.items() if len(users) > 1}
    assert all(rec.sizes[b] <= row for b in shared), "a large buffer used by two devices"
    assert np.allclose(out.to_numpy(), heat_ref(t, 5), atol=1e-4)


def test_device_to_device_copy_waits_for_the_kernel(on_devices):
    """A copy out of a device starts after the kernel that wrote the rows, even when the
    host does not wait: many short iterations with halos exchanged after each."""
    for peer in (False, True):
        start(on_devices, 2, peer)
        t = np.random.default_rng(1).random((8, 2048)).astype(np.float32)
        st = sk.Stencil(HEAT, 1, sk.NEAREST)
        assert np.allclose(st(sk.Matrix(t), iterations=60).to_numpy(), heat_ref(t, 60),
                           atol=1e-4)


class BufferCounter:
    def __init__(self, cl):
        self._cl = cl
        self.made = 0

    def __getattr__(self, name):
        return getattr(self._cl, name)

    def Buffer(self, *args, **kw):  # noqa: N802 - pyopencl's name
        self.made += 1
        return self._cl.Buffer(*args, **kw)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("peer", [False, True], ids=["via-host", "peer"])
def test_calls_in_a_loop_reuse_buffers(on_devices, monkeypatch, n, peer):
    """After the first call, a skeleton called in a loop takes its output buffers (and
    the staging memory of its halo exchanges) from the pools: nothing is allocated."""
    import pyopencl as cl
    start(on_devices, n, peer)
    x = sk.Vector(np.arange(100, dtype=np.float32))
    img = sk.Matrix(np.random.default_rng(0).random((40, 30)).astype(np.float32))
    idx = sk.IndexVector(77)
    f = sk.Map("float f(float x) { return x + 1.0f; }")
    z = sk.Zip("float g(float x, float y, float a) { return a * x + y; }")
    mi = sk.Map("int h(int i) { return 2 * i; }")
    mo = sk.MapOverlap("float b(float_matrix_t m) { return get(m, -1, 0); }", 1)
    st = sk.Stencil(HEAT, 1, sk.NEAREST)

    def calls():
        f(x)
        z(x, x, 2.0)
        mi(idx)
        mo(img)
        st(img, iterations=4)
    calls()
    counter = BufferCounter(cl)
    monkeypatch.setattr(transfer, "_cl", lambda: counter)
    for _ in range(3):
        calls()
    monkeypatch.undo()
    assert counter.made == 0
    assert np.array_equal(mi(idx).to_numpy(), 2 * np.arange(77))


def test_an_empty_buffer_per_device(on_devices):
    """A kernel argument without data (the input of a Map over indices) is a buffer of
    that device: one buffer on two devices makes a GPU driver serialise the kernels."""
    from mcl.skel.kernel import empty_buffer
    devs = start(on_devices, 2, False)
    assert empty_buffer(devs, 0) is not empty_buffer(devs, 1)
    assert empty_buffer(devs, 1) is empty_buffer(devs, 1)


@pytest.mark.parametrize("n", [2, 3])
@pytest.mark.parametrize("peer", [False, True], ids=["via-host", "peer"])
def test_stencil_calls_in_a_loop(on_devices, early_host_reads, n, peer):
    """A Stencil keeps what a call planned for the next call on the same buffers (a loop
    alternates two or three sets): chained calls of different lengths, and repeated
    calls on one input, give numpy's results."""
    start(on_devices, n, peer)
    t = np.random.default_rng(2).random((31, 17)).astype(np.float32)
    st = sk.Stencil(HEAT, 1, sk.NEAREST)
    m, ref = sk.Matrix(t), t
    for its in (3, 4, 3, 4, 1, 2, 5, 4):
        m, ref = st(m, iterations=its), heat_ref(ref, its)
        assert np.allclose(m.to_numpy(), ref, atol=1e-4)
    x = sk.Matrix(t)
    for _ in range(4):
        assert np.allclose(st(x, iterations=4).to_numpy(), heat_ref(t, 4), atol=1e-4)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_calls_in_a_loop_prepare_nothing(on_devices, monkeypatch, n):
    """After the first call, a skeleton in a loop enqueues one kernel per device and
    part, with the argument types its kernels were given once (pyopencl's generic
    argument setting costs 9 us per scalar on PoCL)."""
    import pyopencl as cl
    import pyopencl._cl as cl_core
    start(on_devices, n, False)
    x = sk.Vector(np.arange(100, dtype=np.float32))
    img = sk.Matrix(np.random.default_rng(0).random((40, 30)).astype(np.float32))
    idx = sk.IndexVector(77)
    f = sk.Map("float f(float x) { return x + 1.0f; }")
    z = sk.Zip("float g(float x, float y, float a) { return a * x + y; }")
    mi = sk.Map("int h(int i) { return 2 * i; }")
    mo = sk.MapOverlap("float b(float_matrix_t m) { return get(m, -1, 0); }", 1)
    st = sk.Stencil(HEAT, 1, sk.NEAREST)
    calls = {"Map": lambda: f(x), "Zip": lambda: z(x, x, 2.0), "IndexVector": lambda: mi(idx),
             "MapOverlap": lambda: mo(img), "Stencil": lambda: st(img, iterations=4)}
    for call in calls.values():
        call()
        call()
    typed, launched = [], []
    real_types, real_launch = cl.Kernel.set_arg_types, cl_core.enqueue_nd_range_kernel
    monkeypatch.setattr(cl.Kernel, "set_arg_types",
                        lambda k, types: typed.append(k) or real_types(k, types))
    # pyopencl's Kernel.__call__ enqueues through pyopencl._cl, mcl.skel's launches
    # whose arguments are set through pyopencl
    for module in (cl_core, cl):
        monkeypatch.setattr(module, "enqueue_nd_range_kernel",
                            lambda *a: launched.append(a[0]) or real_launch(*a))
    for name, call in calls.items():
        launched.clear()
        call()
        if name != "Stencil":
            assert len(launched) == n, name
    monkeypatch.undo()
    assert typed == []
    assert np.array_equal(mi(idx).to_numpy(), 2 * np.arange(77))
