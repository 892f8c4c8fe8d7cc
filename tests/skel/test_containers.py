"""Containers, distributions and redistributions against numpy on 1-3 devices."""

from __future__ import annotations

import numpy as np
import pytest

import mcl.skel as sk
from mcl.diagnostics import McplError

SIZES = [0, 1, 7, 100]
DISTS = {"single0": lambda: sk.single(0), "singlelast": "last", "copy": sk.copy,
         "block": sk.block}


def dist(name, ndev):
    if name == "singlelast":
        return sk.single(ndev - 1)
    return DISTS[name]()


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("src", list(DISTS))
@pytest.mark.parametrize("dst", list(DISTS))
def test_vector_redistribution(ndev, n, src, dst):
    a = np.arange(n, dtype=np.float32) * 1.5
    v = sk.Vector(a, distribution=dist(src, ndev))
    v._ensure()
    v._host_valid = False       # force the data to come from the devices
    v.distribution = dist(dst, ndev)
    v._ensure()
    v._host_valid = False
    assert np.array_equal(v.to_numpy(), a)


@pytest.mark.parametrize("rows", [0, 1, 5, 13])
@pytest.mark.parametrize("src,dst", [("block", "overlap"), ("overlap", "block"),
                                     ("overlap", "copy"), ("single0", "overlap"),
                                     ("copy", "overlap")])
def test_matrix_overlap_redistribution(ndev, rows, src, dst):
    m = np.arange(rows * 4, dtype=np.int32).reshape(rows, 4)
    size = 1 if rows // ndev >= 1 or ndev == 1 else 0

    def make(name):
        return sk.overlap(size) if name == "overlap" else dist(name, ndev)

    c = sk.Matrix(m, distribution=make(src))
    c._ensure(halo=True)
    c._host_valid = False
    c.distribution = make(dst)
    parts = c._ensure(halo=True)
    for p in parts:     # every stored row (halo too) holds the matrix's row
        if p.buffer is None:
            continue
        got = np.empty((p.spec.rows, 4), np.int32)
        import pyopencl as cl
        cl.enqueue_copy(sk.current().queue(p.device), got, p.buffer, is_blocking=True)
        assert np.array_equal(got, m[p.spec.lo:p.spec.hi])
    c._host_valid = False
    assert np.array_equal(c.to_numpy(), m)


def test_lazy_transfers(ndev):
    devs = sk.current()
    a = np.arange(50, dtype=np.float32)
    v = sk.Vector(a)
    devs.log.clear()
    assert np.array_equal(np.asarray(v), a)          # on the host: nothing moves
    assert devs.log == []
    double = sk.Map("float f(float x) { return 2 * x; }")
    w = double(v)
    uploads = [t for t in devs.log if t.kind == "upload"]
    assert sum(t.nbytes for t in uploads) == a.nbytes
    devs.log.clear()
    w2 = double(v)                                     # v is still valid on the devices
    assert devs.log == []
    double(w2)                                         # w2 only on the devices
    assert devs.log == []
    assert np.array_equal(w.to_numpy(), 2 * a)
    assert sum(t.nbytes for t in devs.log if t.kind == "download") == a.nbytes
    devs.log.clear()
    w.to_numpy()
    assert devs.log == []


def test_host_write_invalidates_devices(ndev):
    v = sk.Vector(np.zeros(10, np.float32))
    inc = sk.Map("float f(float x) { return x + 1; }")
    inc(v)
    v[3] = 5.0
    assert inc(v).to_numpy()[3] == 6.0


def test_copy_merge(ndev):
    a = np.arange(9, dtype=np.float32)
    v = sk.Vector(a, distribution=sk.copy("float add(float x, float y) { return x + y; }"))
    w = sk.Map("float f(float x) { return x; }")(v)
    assert w.distribution.kind == "copy" and w.distribution.merge is None
    assert np.array_equal(w.to_numpy(), a)             # equal copies are not merged
    v._ensure()
    v._host_valid = False
    v.distribution = sk.block()
    assert np.array_equal(v.to_numpy(), a * ndev)      # the copies were added
    u = sk.Vector(a, distribution=sk.copy())           # no merge function: the first copy
    u._ensure()
    u._host_valid = False
    u.distribution = sk.single(0)
    assert np.array_equal(u.to_numpy(), a)


def test_construction():
    sk.init(num_devices=1, platform="Portable Computing Language")
    v = sk.Vector(size=5, dtype=np.int32)
    assert np.array_equal(np.asarray(v), np.zeros(5, np.int32))
    assert sk.Vector(3).shape == (3,)
    m = sk.Matrix((2, 3), np.float64)
    assert m.to_numpy().shape == (2, 3) and m.dtype == np.float64
    src = np.ones(4, np.float32)
    v = sk.Vector(src)
    src[0] = 9                          # the container copied its data
    assert v[0] == 1
    with pytest.raises(ValueError):
        np.asarray(v)[0] = 3            # the host view is read-only


def test_bad_containers(ndev):
    with pytest.raises(McplError) as e:
        sk.Vector(np.zeros((2, 2)))
    assert e.value.diagnostics[0].code == "skel-needs-vector"
    with pytest.raises(McplError) as e:
        sk.Matrix(np.zeros(3))
    assert e.value.diagnostics[0].code == "skel-needs-matrix"
    with pytest.raises(McplError) as e:
        sk.Vector(np.zeros(3), distribution=sk.single(ndev))
    assert e.value.diagnostics[0].code == "skel-no-such-device"
    with pytest.raises(McplError) as e:
        sk.Vector(np.zeros(3), distribution=sk.overlap(1))
    assert e.value.diagnostics[0].code == "skel-needs-matrix"
    if ndev > 1:
        with pytest.raises(McplError) as e:
            sk.Matrix(np.zeros((4, 4)), distribution=sk.overlap(3))
        assert e.value.diagnostics[0].code == "skel-overlap-too-large"
    with pytest.raises(McplError):
        sk.Vector(np.zeros(3, dtype=np.complex64))
    for make in (lambda: sk.Vector(size=-1), lambda: sk.Vector(-3),
                 lambda: sk.Matrix(shape=(2, -1))):
        with pytest.raises(McplError) as e:
            make()
        assert e.value.diagnostics[0].code == "skel-negative-size", e.value


def test_out_of_device_memory_leaves_input_intact(ndev, monkeypatch):
    """A container larger than its device holds is refused before any buffer is made.
    The device is given 1 MiB (its real memory, several GiB, would take a container of
    more elements than the 32-bit indices of mcl.skel's kernels reach, refused first)."""
    devs = sk.current()
    work_group = devs.limit(0)[2]
    monkeypatch.setattr(devs, "limits", {g: (1 << 20, 1 << 20, work_group)
                                         for g in range(len(devs.devices))})
    n = (1 << 20) // 4 * ndev + 4 * ndev * 1024
    v = sk.Vector(size=n, dtype=np.float32)
    v.distribution = sk.single(0)
    with pytest.raises(McplError) as e:
        sk.Map("float f(float x) { return x; }")(v)
    assert e.value.diagnostics[0].code == "skel-out-of-memory"
    assert v._parts == [] and v._host_valid


def test_profiling_queues_only_when_asked(monkeypatch):
    """Queues time their commands only on request (profiling made every enqueue 5 us
    dearer on an H100); the copy queues follow the device queues."""
    import pyopencl as cl
    prof = cl.command_queue_properties.PROFILING_ENABLE
    monkeypatch.delenv("MCL_SKEL_PROFILING", raising=False)
    devs = sk.init(num_devices=1, platform="Portable Computing Language")
    assert not devs.queues[0].properties & prof and not devs.copy_queue(0).properties & prof
    devs = sk.init(num_devices=1, platform="Portable Computing Language", profiling=True)
    assert devs.queues[0].properties & prof and devs.copy_queue(0).properties & prof
    monkeypatch.setenv("MCL_SKEL_PROFILING", "1")
    devs = sk.init(num_devices=1, platform="Portable Computing Language")
    ev = sk.Map("float twice(float x) { return 2 * x; }")(sk.Vector(np.ones(8, np.float32)))
    assert np.array_equal(ev.to_numpy(), np.full(8, 2, np.float32))
    assert devs.profiling


def test_too_many_devices():
    with pytest.raises(McplError) as e:
        sk.init(num_devices=64, platform="Portable Computing Language")
    assert e.value.diagnostics[0].code == "skel-no-such-device"
    with pytest.raises(McplError) as e:
        sk.init(num_devices=0, platform="Portable Computing Language")
    assert "0 device(s) asked for: give 1 or more" in str(e.value)


@pytest.mark.parametrize("n", [2, 3])
def test_copies_staged_through_host(on_devices, n):
    """GPUs copy between devices through host memory (no driver-side migration)."""
    on_devices(n)
    sk.init(num_devices=n, platform="Portable Computing Language", peer_copies=False)
    devs = sk.current()
    a = np.arange(31, dtype=np.float32)
    v = sk.Map("float f(float x) { return x + 1.0f; }")(sk.Vector(a))
    v.distribution = sk.copy()
    w = sk.Map("float f(float x) { return x * 2.0f; }")(v)
    moved = [t for t in devs.log if t.kind == "device"]
    assert moved and all(t.via_host for t in moved)
    assert np.array_equal(w.to_numpy(), (a + 1) * 2)
    x = np.random.default_rng(0).random((20, 7)).astype(np.float32)
    heat = sk.Stencil("float h(float_matrix_t m) { return 0.5f * (get(m, -1, 0) + "
                      "get(m, 1, 0)); }", 1)
    ref = x
    for _ in range(6):
        p = np.pad(ref, ((1, 1), (0, 0)))
        ref = 0.5 * (p[:-2] + p[2:])
    assert np.allclose(heat(sk.Matrix(x), iterations=6).to_numpy(), ref, atol=1e-6)
    assert "through the host" in str(sk.explain(lambda: heat(sk.Matrix(x), iterations=3)))
