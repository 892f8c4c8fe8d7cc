"""Run by tests/skel/test_mpi.py under ``mpiexec -n 2``: every skeleton over the ranks'
devices against numpy; prints one line per rank."""

import sys

import numpy as np

import mcl.skel as sk

per_rank = int(sys.argv[1]) if len(sys.argv) > 1 else 1
devs = sk.init(num_devices=per_rank, platform="Portable Computing Language")
assert devs.ranks == 2, devs.ranks
rng = np.random.default_rng(7)
checks = {}

for n in (0, 1, 5, 1001):
    a = rng.random(n, dtype=np.float32)
    b = rng.random(n, dtype=np.float32)
    A, B = sk.Vector(a), sk.Vector(b)
    sq = sk.Map("float f(float x) { return x * x; }")(A)
    checks[f"map{n}"] = np.allclose(sq.to_numpy(), a * a)
    sx = sk.Zip("float f(float x, float y, float s) { return s * x + y; }")(A, B, 2.0)
    checks[f"zip{n}"] = np.allclose(sx.to_numpy(), 2 * a + b)
    tot = sk.Reduce("float add(float x, float y) { return x + y; }", identity=0.0)(A)
    checks[f"reduce{n}"] = np.isclose(tot.to_numpy()[0], a.astype(np.float64).sum(), rtol=1e-4)
    dot = sk.Reduce("float add(float x, float y) { return x + y; }", identity=0.0)(
        sk.Zip("float mult(float x, float y) { return x * y; }").lazy(A, B))
    checks[f"dot{n}"] = np.isclose(dot.to_numpy()[0], np.dot(a.astype(np.float64), b),
                                   rtol=1e-4)
    ia = (a * 100).astype(np.int32)
    sc = sk.Scan("int add(int x, int y) { return x + y; }")(sk.Vector(ia))
    checks[f"scan{n}"] = np.array_equal(sc.to_numpy(), np.cumsum(ia, dtype=np.int32))
    # redistribution across ranks: block -> single(last) -> copy -> block
    sq.distribution = sk.single(devs.count - 1)
    again = sk.Map("float f(float x) { return x + 1.0f; }")(sq)
    again.distribution = sk.copy()
    third = sk.Map("float f(float x) { return x * 2.0f; }")(again)
    third.distribution = sk.block()
    checks[f"redistribute{n}"] = np.allclose(third.to_numpy(), (a * a + 1) * 2)

x = rng.random((23, 9), dtype=np.float32)
blur = sk.MapOverlap("""float f(float_matrix_t m) {
    return get(m, -1, 0) + get(m, 1, 0) + get(m, 0, 0); }""", 1)
p = np.pad(x, 1)
checks["mapoverlap"] = np.allclose(blur(sk.Matrix(x)).to_numpy(),
                                   p[:-2, 1:-1] + p[2:, 1:-1] + x)
heat = sk.Stencil("""float h(float_matrix_t m) {
    return 0.25f * (get(m, -1, 0) + get(m, 1, 0) + get(m, 0, -1) + get(m, 0, 1)); }""", 1,
                  sync_every=2)
ref = x
for _ in range(5):
    p = np.pad(ref, 1)
    ref = 0.25 * (p[:-2, 1:-1] + p[2:, 1:-1] + p[1:-1, :-2] + p[1:-1, 2:])
checks["stencil"] = np.allclose(heat(sk.Matrix(x), iterations=5).to_numpy(), ref, atol=1e-6)
b2 = rng.random((9, 14), dtype=np.float32)
mm = sk.AllPairs(zip="float m(float x, float y) { return x * y; }",
                 reduce="float a(float x, float y) { return x + y; }", identity=0.0)
checks["allpairs"] = np.allclose(mm(sk.Matrix(x), sk.Matrix(b2)).to_numpy(), x @ b2, rtol=1e-4)
mpi_moves = sum(t.nbytes for t in devs.log if t.kind == "mpi")
failed = [k for k, ok in checks.items() if not ok]
print(f"rank {devs.rank} of {devs.ranks}, {devs.count} devices: "
      f"{'ok' if not failed else 'FAILED ' + ' '.join(failed)}; sent {mpi_moves} bytes over MPI",
      flush=True)
sys.exit(1 if failed else 0)
