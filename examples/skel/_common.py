"""Command-line handling shared by the examples."""

from __future__ import annotations

import argparse
import sys

import numpy as np


def main(name: str, default_size: int, run, reference, inputs, rtol=1e-4, atol=1e-5,
         extra=None) -> int:
    ap = argparse.ArgumentParser(description=f"mcl.skel example: {name}")
    ap.add_argument("--size", type=int, default=default_size, help="problem size")
    ap.add_argument("--devices", type=int, default=None, help="number of devices")
    if extra:
        extra(ap)
    args = ap.parse_args()
    import mcl.skel as sk
    from mcl.diagnostics import McplError, render_text
    try:
        sk.init(num_devices=args.devices)
        data = inputs(args.size)
        got = run(*data, **({} if not extra else {"args": args}))
    except McplError as e:
        print(render_text(e.diagnostics), file=sys.stderr)
        return 1
    want = reference(*data)
    ok = np.allclose(got, want, rtol=rtol, atol=atol)
    print(f"{name}: size {args.size} on {sk.current().count} device(s): "
          f"{'matches' if ok else 'DIFFERS FROM'} numpy")
    return 0 if ok else 1
