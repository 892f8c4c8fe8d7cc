"""Which construct of AllPairs's zip-reduce kernel a driver gets wrong: the tilings and
sizes that benchmarks/skel/allpairs_check.py found wrong on the GPU machine's PoCL 5.0,
with the kernel's text changed one construct at a time (its pointers not ``restrict``,
its local arrays not ``aligned(32)``, no required work-group size, no ``#pragma
unroll``, the accumulators always set to zero first), each built as is and without
optimisation (-cl-opt-disable).

    python benchmarks/skel/allpairs_variants.py [--platform PoCL] [--out FILE.json]

A variant that is right where the kernel as generated is wrong names the construct the
driver miscompiles."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

CASES = [("32x32x24/4x4@d", None, (1, 3, 1)), ("32x32x24/4x4@d", None, (131, 48, 130)),
         ("32x32x24/4x4@i", 0.0, (128, 64, 64)), ("64x64x16/4x4", 0.0, (70, 37, 45)),
         ("32x32x24/4x4@d", 0.0, (70, 37, 45)), ("64x64x16/4x4", None, (70, 37, 45))]
VARIANTS = {
    "as generated": [],
    "no restrict": [(r"\brestrict\b", "")],
    "no aligned": [(r"__attribute__\(\(aligned\(32\)\)\)", "")],
    "no reqd size": [(r"#define REQD 1", "#define REQD 0")],
    "no unroll": [(r"#pragma unroll", "")],
    "acc zeroed": [(r"#if D == 0 \|\| HAS_ID", "#if 1")],
    "volatile local": [(r"__local TA l_a", "volatile __local TA l_a"),
                       (r"__local TB l_b", "volatile __local TB l_b"),
                       (r"\*\(__local TB4\*\)&l_b\[(\w+(?: - \w+)?|1 - cur|0)\]\[k\]\[c\] = "
                        r"\(TB4\)\(bn\[s\]\[0\], bn\[s\]\[1\], bn\[s\]\[2\], bn\[s\]\[3\]\);",
                        r"for (int u = 0; u < 4; ++u) l_b[\1][k][c + u] = bn[s][u];")],
}
MUL = "float mul(float x, float y) { return x * y; }"
ADD = "float add(float x, float y) { return x + y; }"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", default="Portable Computing Language")
    ap.add_argument("--out", type=Path)
    opts = ap.parse_args()
    import mcl.skel as sk
    from mcl.skel.allpairs import AllPairs
    devs = sk.init(num_devices=1, platform=opts.platform)
    built = AllPairs.kernel
    current: list = []

    def kernel(self, devs, g, prelude, body, entry, options=()):
        for pattern, repl in current:
            body, count = re.subn(pattern, repl, body)
            if not count:
                raise SystemExit(f"the variant's pattern {pattern!r} is not in the kernel")
        return built(self, devs, g, prelude, body, entry, options)

    AllPairs.kernel = kernel
    rows = []
    for name, subs in VARIANTS.items():
        for options in ((), ("-cl-opt-disable",)):
            current[:] = subs
            wrong = []
            for tile, identity, (n, d, m) in CASES:
                mm = sk.AllPairs(zip=MUL, reduce=ADD, tile=tile, identity=identity,
                                 options=list(options))
                rng = np.random.default_rng(n)
                a = (rng.random((n, d)) - 0.5).astype(np.float32)
                b = (rng.random((d, m)) - 0.5).astype(np.float32)
                got = mm(sk.Matrix(a), sk.Matrix(b)).to_numpy()
                bad = int((~np.isclose(got, a @ b, rtol=1e-4, atol=1e-5)).sum())
                if bad:
                    wrong.append(f"{tile} identity={identity} {n}x{d}x{m}: {bad}")
            rows.append({"variant": name, "options": list(options), "wrong": wrong})
            print(f"{name:15s} {' '.join(options) or '-O':17s} {len(wrong)} of {len(CASES)} "
                  f"wrong{': ' + '; '.join(wrong) if wrong else ''}", flush=True)
    if opts.out:
        opts.out.write_text(json.dumps({"device": devs.name(0), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
