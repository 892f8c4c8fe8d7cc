"""Bisect the AllPairs zip-reduce kernel of code shape l against Lift's text: the same
matmul (AllPairs(mult, add, identity 0) at n x n x n, one device) built from shape l's
source with edits that move it toward Lift's kernel one at a time, each verified
against cuBLAS (torch) or numpy, timed in alternating blocks with cuBLAS, and its
registers as NVIDIA's compiler reports them. For finding what in the generated text
costs registers or time; the edits are experiments, not library options.

    python3 benchmarks/skel/allpairs_bisect.py --size 4096 --out DIR \\
        128x128x16/8x8@l 128x128x16/8x8@l+p0 128x128x16/8x8@l+p0+g1+nooff

Edits (after the tiling, joined by +): pN A's tile rows padded by N (the library's
PAD otherwise), gN blocks numbered N block rows together (-DMCL_ALLPAIRS_GROUP=N),
nooff the A and C offsets of a device's part dropped from the text (one device: they
are 0), rN at most N registers (-cl-nv-maxrregcount=N, REQD 0), noid no identity.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))
sys.path.insert(0, str(HERE.parents[1] / "examples" / "skel"))
sys.path.insert(0, str(HERE))

import mcl.skel as sk  # noqa: E402
import mcl.skel.allpairs as ap  # noqa: E402
from run import _capture_source, _nvidia_registers, init, paired, timeit, torch_cuda  # noqa: E402


def variant(text: str):
    """The tiling, build options, identity flag and source edit of ``text``."""
    tile, *edits = text.split("+")
    opts, identity, pad, nooff = [], True, None, False
    for e in edits:
        if e == "noid":
            identity = False
        elif e == "nooff":
            nooff = True
        elif re.fullmatch(r"p\d+", e):
            pad = int(e[1:])
        elif re.fullmatch(r"g\d+", e):
            opts.append(f"-DMCL_ALLPAIRS_GROUP={e[1:]}")
        elif re.fullmatch(r"r\d+", e):
            opts.append(f"-cl-nv-maxrregcount={e[1:]}")
        else:
            raise SystemExit(f"allpairs_bisect: unknown edit '+{e}' in '{text}'")
    return tile, tuple(opts), identity, pad, nooff


class _edited:
    """Shape l's source with ``pad`` and ``nooff`` applied while the block runs."""

    def __init__(self, pad, nooff):
        self.pad, self.nooff = pad, nooff

    def __enter__(self):
        self.orig = ap.lift_source
        pad, nooff, orig = self.pad, self.nooff, self.orig

        def source(bm, bn, bk, tm, tn, p, has_identity):
            text = orig(bm, bn, bk, tm, tn, p if pad is None else pad, has_identity)
            if nooff:
                text = text.replace("A += a_off;", "").replace("C += c_off;", "")
            return text
        ap.lift_source = source

    def __exit__(self, *exc):
        ap.lift_source = self.orig
        return False


def main() -> int:
    ap_ = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap_.add_argument("variants", nargs="+")
    ap_.add_argument("--size", type=int, default=4096)
    ap_.add_argument("--reps", type=int, default=40)
    ap_.add_argument("--kind", default=None)
    ap_.add_argument("--out", type=Path)
    args = ap_.parse_args()
    import matmul as ex
    torch = torch_cuda()
    devs = init(1, args.kind)
    n = args.size
    a, b = ex.inputs(n)
    A, B = sk.Matrix(a), sk.Matrix(b)
    A._ensure(sk.block())
    B._ensure(sk.copy())
    if torch:
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        want = (ta @ tb).cpu().numpy()
    else:
        want = a @ b
    rows = []
    for text in args.variants:
        tile, opts, identity, pad, nooff = variant(text)
        mm = sk.AllPairs(zip=ex.MULT, reduce=ex.ADD, identity=0.0 if identity else None,
                         tile=tile, options=opts or None)
        row = {"variant": text, "size": n}
        with _edited(pad, nooff), _capture_source() as src:
            try:
                res = mm(A, B).to_numpy()
            except Exception as e:  # noqa: BLE001 - a variant that fails is a result
                row["error"] = str(e)[:300]
                rows.append(row)
                print(json.dumps(row), flush=True)
                continue
            row["correct"] = bool(np.allclose(res, want, rtol=1e-3, atol=1e-2))
            if row["correct"]:
                if torch:
                    t, t_ref = paired(lambda: mm(A, B), devs.finish,  # noqa: B023
                                      lambda: ta @ tb, torch.cuda.synchronize, args.reps)
                    row.update(skeleton_s=t, torch_s=t_ref, skeleton_vs_torch=round(t_ref / t, 3))
                else:
                    row["skeleton_s"] = timeit(lambda: mm(A, B), devs.finish, args.reps)  # noqa: B023
        row.update(_nvidia_registers(devs, src.get("source"), mm.options))
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / f"allpairs_bisect_{n}.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
