"""What a kernel's OpenCL profiling time holds besides the kernel: the same launch timed
five ways, for the examples the fidelity harness knows (benchmarks/fidelity).

* ``idle``: each launch enqueued on an idle device and waited for before the next, as
  ``mcl run``, the case studies (benchmarks/case_studies/run.py) and the fidelity
  harness's warm timing launch kernels;
* ``queued``: each timed launch enqueued right behind another launch of the same
  kernel, with no wait between, as an application's stream of kernels runs (the data
  as warm as ``idle`` leaves it);
* ``cold``: each launch enqueued right behind the cache flush of mcl.opencl.conditions (a
  write of 256 MB and a read of it), as the fidelity harness times kernels;
* ``read``: right behind a read of 256 MB of other data (the L2 left holding other
  clean lines, nothing written);
* ``busy``: right behind a kernel that computes for about 40 us and touches no memory
  (mcl.opencl.conditions.keep_awake, as ``mcl run`` times kernels).

The 1 GiB copy of the copy ceiling (benchmarks/gpu_env.py) is timed the same five
ways. Every kernel is verified against its reference.py first. Prints a table and
writes ``--out`` (JSON). Exits 2 without an NVIDIA OpenCL device.

    python3 benchmarks/opencl/launch_modes.py gesummv/hopper_v2 black_scholes/hopper_v2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "fidelity"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from probe_timing import nvidia_queue  # noqa: E402

MODES = ("idle", "queued", "cold", "read", "busy")
COPY_BYTES = 1 << 30


def times(enqueue, mode: str, repeats: int, before: dict) -> list[float]:
    """Seconds of ``repeats`` timed launches by ``enqueue()`` (which returns the launch's
    event without waiting) in ``mode`` (``before``: what each mode enqueues ahead of the
    launch, by mode), after two untimed."""
    for _ in range(2):
        enqueue().wait()
    out = []
    for _ in range(repeats):
        if mode == "queued":
            enqueue()
        elif mode in before:
            before[mode]()
        ev = enqueue()
        ev.wait()
        out.append((ev.profile.end - ev.profile.start) * 1e-9)
    return out


def example(ctx, queue, name: str):
    """(enqueue, bytes the reference moves) of an example case at the fidelity sizes,
    verified first: the launch of mcl.opencl.runtime.Kernel.prepared on device arrays."""
    import fidelity_cases as C
    import measure as M
    import pyopencl.array as cla

    from mcl.opencl.runtime import Kernel
    case = next(c for c in C.example_cases() if c.name == name)
    gen = M.Generated(case, Path(tempfile.mkdtemp(prefix="mcl-modes-")))
    ref, inputs, expected = M._inputs(case)
    kernel = Kernel(gen.kernel, ctx, queue)
    call = {p: inputs[p] for p in kernel.plan.parameters if p in inputs}
    got = kernel(**{n: (v.copy() if isinstance(v, np.ndarray) else v)
                    for n, v in call.items()})
    for o, want in expected.items():
        if o in got:
            ok, err = M.matches(got[o], want, ref.TOLERANCE)
            if not ok:
                raise SystemExit(f"{name}: wrong result ({o}: error {err:.3g})")
    launch, _, _ = kernel.prepared(**{n: (cla.to_device(queue, v) if isinstance(v, np.ndarray)
                                          else v) for n, v in call.items()})
    return launch, float(ref.bytes_moved(**inputs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", help="example cases (kernel/version)")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()
    found = nvidia_queue("launch_modes")
    if found is None:
        return 2
    import pyopencl as cl

    from mcl.opencl.conditions import cache_flush, keep_awake
    dev, ctx, queue = found
    before = {"cold": cache_flush(ctx, queue), "read": cache_flush(ctx, queue, write=False),
              "busy": keep_awake(ctx, queue)}
    src = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, COPY_BYTES)
    dst = cl.Buffer(ctx, cl.mem_flags.READ_WRITE, COPY_BYTES)
    cl.enqueue_fill_buffer(queue, src, np.uint32(1), 0, COPY_BYTES).wait()
    rows = {"copy 1 GiB": (lambda: cl.enqueue_copy(queue, dst, src), 2.0 * COPY_BYTES)}
    for name in args.cases:
        rows[name] = example(ctx, queue, name)
    result = {"device": dev.name, "repeats": args.repeats, "rows": []}
    print("| launch | " + " | ".join(f"{m}: median (best), us" for m in MODES)
          + " | GB/s, queued median |")
    print("| --- |" + " ---: |" * (len(MODES) + 1))
    for name, (enqueue, nbytes) in rows.items():
        got = {m: times(enqueue, m, args.repeats, before) for m in MODES}
        med = {m: statistics.median(t) for m, t in got.items()}
        result["rows"].append({"name": name, "bytes": nbytes, "seconds": got})
        print(f"| {name} | " + " | ".join(f"{med[m] * 1e6:.1f} ({min(got[m]) * 1e6:.1f})"
                                         for m in MODES)
              + f" | {nbytes / med['queued'] / 1e9:.0f} |", flush=True)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
