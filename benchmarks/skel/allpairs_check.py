"""AllPairs's zip-reduce kernel, every tiling of tests/skel/test_allpairs.py at the sizes
it checks, repeated, on one device: how often each result differs from numpy.

    python benchmarks/skel/allpairs_check.py --platform NVIDIA --repeats 5 --out FILE.json

Written when tests/skel/test_allpairs.py failed on the GPU machine's PoCL 5.0 for some
tilings, and not in every run: a kernel that is wrong fails on every device and in
every run; a driver that runs it wrongly only on its own."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

TILES = ["64x64x16/4x4", "128x64x8/8x4", "32x64x4/2x8", "16x16x4/1x1", "64x32x8/8x2",
         "64x64x16/4x4,32x8", "64x64x16/4x4,32x8@i", "64x64x16/4x4,16x16@d",
         "32x64x4/2x8@r", "32x32x24/4x4@d", "32x32x24/4x4@i", "64x64x16/4x4@l",
         "32x64x4/2x8@l", "16x16x4/1x1@l", "32x32x24/4x4,8x8@l", "64x32x8/8x2@l"]
SIZES = [(70, 37, 45), (128, 64, 64), (1, 3, 1), (131, 48, 130)]
MUL = "float mul(float x, float y) { return x * y; }"
ADD = "float add(float x, float y) { return x + y; }"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", default="Portable Computing Language")
    ap.add_argument("--devices", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--out", type=Path)
    ap.add_argument("--tiles", nargs="*", default=TILES, help="the tilings (default: all)")
    ap.add_argument("--options", default="", help="OpenCL build options of the kernel")
    opts = ap.parse_args()
    import mcl.skel as sk
    devs = sk.init(num_devices=opts.devices, platform=opts.platform)
    rows = []
    for tile in opts.tiles:
        for identity in (None, 0.0):
            mm = sk.AllPairs(zip=MUL, reduce=ADD, tile=tile, identity=identity,
                             options=opts.options.split())
            for n, d, m in SIZES:
                rng = np.random.default_rng(n)
                a = (rng.random((n, d)) - 0.5).astype(np.float32)
                b = (rng.random((d, m)) - 0.5).astype(np.float32)
                want = a @ b
                bad, worst, wrong = 0, 0.0, 0
                for _ in range(opts.repeats):
                    got = mm(sk.Matrix(a), sk.Matrix(b)).to_numpy()
                    ok = np.isclose(got, want, rtol=1e-4, atol=1e-5)
                    if not ok.all():
                        bad += 1
                        wrong = max(wrong, int((~ok).sum()))
                        worst = max(worst, float(np.nanmax(np.abs(got - want))))
                rows.append({"tile": tile, "identity": identity, "size": [n, d, m],
                             "failed": bad, "repeats": opts.repeats,
                             "most_wrong_elements": wrong, "max_error": worst})
                if bad:
                    print(f"{tile:24s} identity={identity!s:5s} {n}x{d}x{m}: {bad}/"
                          f"{opts.repeats} runs wrong, up to {wrong} elements, error {worst:.3g}")
    failed = sum(r["failed"] > 0 for r in rows)
    print(f"{devs.name(0)}{' ' + opts.options if opts.options else ''}: {failed} of "
          f"{len(rows)} cases wrong in some run")
    if opts.out:
        opts.out.write_text(json.dumps({"device": devs.name(0), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
