"""Run by tests/skel/test_mpi_misuse.py under ``mpiexec -n 2`` (one PoCL device a
rank): a MapOverlap and a Stencil whose row offset comes from the data (only the run-time
flags see how far they read), within their reach or beyond it on one rank only, and
misuse across ranks (containers of different sizes, an exception on one rank). Prints
what each rank sees; the misuse is left uncaught, as in a user's program."""

import sys

import numpy as np

import mcl.skel as sk
from mcl.diagnostics import McplError

mode = sys.argv[1]
devs = sk.init(num_devices=1, platform="Portable Computing Language")
assert devs.ranks == 2, devs.ranks
rank = devs.rank

#: the row offset of each element's read is the element itself (k from the data)
FOLLOW = """float follow(float_matrix_t m, float w) {
  int k = (int)get(m, 0, 0);
  return w * get(m, k, 0) + get(m, 0, 1);
}"""

rng = np.random.default_rng(3)
x = rng.integers(-1, 2, size=(24, 5)).astype(np.float32)   # offsets -1, 0, 1: size 1


def follow_ref(a, w=0.5):
    rows, cols = a.shape
    p = np.pad(a, 1)                # neutral 0 outside
    k = a.astype(int)
    r = np.arange(rows)[:, None] + k + 1
    c = np.arange(cols)[None, :] + 1
    return (np.float32(w) * p[r, c] + p[1:-1, 2:]).astype(np.float32)


if mode == "within":
    mo = sk.MapOverlap(FOLLOW, 1)
    assert mo._computed_offsets
    ok_mo = np.allclose(mo(sk.Matrix(x), 0.5).to_numpy(), follow_ref(x))
    st = sk.Stencil(FOLLOW, 1)
    # the first iteration's results are offsets -1.5 .. 1.5: truncated, within the reach
    ok_st = np.allclose(st(sk.Matrix(x), 0.5, iterations=2).to_numpy(),
                        follow_ref(follow_ref(x)))
    print(f"rank {rank}: mapoverlap {'ok' if ok_mo else 'WRONG'}, "
          f"stencil {'ok' if ok_st else 'WRONG'}", flush=True)
    sys.exit(0 if ok_mo and ok_st else 1)

if mode == "beyond":
    # one element of the last rows (rank 1's block) reads 3 rows up; every rank gets
    # the data, so every rank's containers agree
    y = x.copy()
    y[20, 2] = -3
    mo = sk.MapOverlap(FOLLOW, 1)
    try:
        mo(sk.Matrix(y), 0.5)
        print(f"rank {rank}: no error", flush=True)
    except McplError as e:
        print(f"rank {rank} caught: {e}", flush=True)
    # the same read uncaught, by a Stencil: the program ends with the message
    sk.Stencil(FOLLOW, 1)(sk.Matrix(y), 0.5, iterations=2)
    print(f"rank {rank}: went on", flush=True)

if mode == "sizes":
    v = sk.Vector(np.ones(100 + 3 * rank, np.float32))
    print(f"rank {rank}: {sk.Map('float f(float x) { return x; }')(v).to_numpy().sum()}",
          flush=True)

if mode == "raise":
    v = sk.Map("float f(float x) { return x + 1.0f; }")(sk.Vector(np.ones(1000, np.float32)))
    if rank == 1:
        raise ValueError("a bug on rank 1 only")
    # rank 0 waits for rank 1's part
    print(f"rank {rank}: {v.to_numpy().sum()}", flush=True)

if mode == "local-mcl":
    v = sk.Vector(np.ones(1000, np.float32))
    if rank == 1:
        v.distribution = sk.single(7)       # a usage error on rank 1 only
    print(f"rank {rank}: {sk.Map('float f(float x) { return x; }')(v).to_numpy().sum()}",
          flush=True)

if mode == "scalar":
    # the additional argument differs by rank: each rank's parts would use its own
    zipped = sk.Zip("float f(float x, float y, float c) { return x + y * c; }")
    v = sk.Vector(np.ones(1000, np.float32))
    w = sk.Vector(np.ones(1000, np.float32))
    print(f"rank {rank}: same {zipped(v, w, 2.0).to_numpy().sum()}", flush=True)
    try:
        zipped(v, w, float(rank))
        print(f"rank {rank}: no error", flush=True)
    except McplError as e:
        print(f"rank {rank} caught: {e}", flush=True)
    # a Reduce of a deferred Map whose argument differs, uncaught
    scale = sk.Map("float g(float x, float s) { return x * s; }")
    sk.Reduce("float add(float a, float b) { return a + b; }")(scale.lazy(v, 1.0 + rank))
    print(f"rank {rank}: went on", flush=True)

if mode == "distribution":
    v = sk.Vector(np.arange(1000, dtype=np.float32))
    v.distribution = sk.single(rank)        # a device of each rank: not the same one
    m = sk.Map("float f(float x) { return x + 1.0f; }")
    print(f"rank {rank}: {m(v).to_numpy().sum()}", flush=True)

if mode == "exit":
    v = sk.Map("float f(float x) { return x + 1.0f; }")(sk.Vector(np.ones(1000, np.float32)))
    if rank == 1:
        sys.exit(3)                         # rank 1 only: rank 0 waits for its part
    print(f"rank {rank}: {v.to_numpy().sum()}", flush=True)

if mode == "uneven-end":
    # every rank ends normally, rank 1 seconds after rank 0 (local work): no abort
    v = sk.Map("float f(float x) { return x + 1.0f; }")(sk.Vector(np.ones(1000, np.float32)))
    total = v.to_numpy().sum()
    if rank == 1:
        import time
        time.sleep(3)
    print(f"rank {rank}: {total}", flush=True)
    sys.exit(0)
