"""What the OpenCL compiler of a device makes of generated kernels: its build log,
the work-group limit and private memory per kernel, and one timed launch — for
finding out why a generated kernel is slow on a platform.

    python benchmarks/opencl/diagnose.py FILE.mcpl... --target hopper --set n=1024 ...
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))


def main() -> int:
    import pyopencl as cl

    import mcl
    from mcl.opencl.plan import evaluate

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+")
    ap.add_argument("--target", default="hopper")
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE")
    args = ap.parse_args()
    sizes = {k: int(v) for k, v in (s.split("=") for s in args.set)}
    for f in args.files:
        k = mcl.compile(f, target=args.target)
        prog = k.program(sizes)
        dev = k.device
        kern = cl.Kernel(prog, k.plan.kernel)
        print(f"== {f} -> {k.plan.kernel} on {dev.name}")
        print("build log:", prog.get_build_info(dev, cl.program_build_info.LOG).strip()[:2000])
        for what in ("WORK_GROUP_SIZE", "PRIVATE_MEM_SIZE", "LOCAL_MEM_SIZE"):
            info = getattr(cl.kernel_work_group_info, what)
            print(f"  {what}: {kern.get_work_group_info(info, dev)}")
        print("  local size:", [evaluate(e, sizes) for e in k.plan.local_size],
              "global size:", [evaluate(e, sizes) for e in k.plan.global_size])
        try:
            args_ = {}
            rng = np.random.default_rng(0)
            env = dict(sizes)
            for a in k.plan.arguments:
                if a.kind == "buffer":
                    shape = tuple(evaluate(e, env) for e in a.shape)
                    args_[a.name] = rng.uniform(0, 1, shape).astype(a.dtype)
            t0 = time.time()
            k(**sizes, **args_)
            wall = time.time() - t0
            ev = k.last_event
            print(f"  first launch: kernel {(ev.profile.end - ev.profile.start) * 1e-6:.3f} ms, "
                  f"call {wall * 1e3:.1f} ms")
        except Exception as e:  # a diagnostic tool reports everything it meets
            print("  launch failed:", str(e)[:500])
    return 0


if __name__ == "__main__":
    sys.exit(main())
