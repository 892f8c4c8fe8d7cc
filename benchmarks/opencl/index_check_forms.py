"""Forms of the run-time index check (mcl.opencl.index_checks), timed against each other
on the kernels where the generator's form cost the most (index_check_cost.py): each
form rewrites the text of the checked kernel mcl.compile generates, which then runs
through the same Kernel object (its fault record as before) and is checked against
reference.py and timed, alternating rounds, best of --repeats behind keep_awake.

* ``unchecked``: compile(check_writes=False), the kernel as written;
* ``record``: the generator's form (a 64-bit comparison; outside, the first fault of
  the launch is recorded by an atomic compare-and-swap, in the access's path);
* ``int``: the same in 32 bits;
* ``deferred``: no store in the access's path: the comparison selects the index or 0
  and keeps the last fault of the work-item in private variables, which the work-item
  records at the kernel's end; ``deferred_int``: the same in 32 bits.

Each row has the NVIDIA compiler's registers per work-item (the CUDA driver's figure for
the program's PTX) where an NVIDIA device is present.

    python benchmarks/opencl/index_check_forms.py --out DIR [--device NVIDIA]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

CASES = {
    "spmv_csr/perfect": ({"nrRows": 65536, "nrCols": 131072}, "y"),
    "spmv_csr/hopper_v1": ({"nrRows": 65536, "nrCols": 131072}, "y"),
    "histogram/gpu_v1": ({"n": 1 << 26, "nrBuckets": 256}, "hist"),
    "histogram/hopper_v2": ({"n": 1 << 26, "nrBuckets": 256}, "hist"),
}

_FUNCTION = re.compile(r"inline long mcl_checked_index\(.*?\n}\n", re.S)

INT_FORM = """inline int mcl_checked_index(int i, int n, int site, __global int *fault)
{
    if ((uint)i < (uint)n)
        return i;
    if (atomic_cmpxchg(fault, 0, site) == 0) {
        fault[1] = i;
        fault[2] = i < 0 ? -1 : 0;
        fault[3] = n;
        fault[4] = 0;
        fault[5] = (int)get_global_id(0);
        fault[6] = (int)get_global_id(1);
        fault[7] = (int)get_global_id(2);
    }
    return 0;
}
"""

DEFERRED_FORM = """inline long mcl_check(long i, long n, int site, int *bad, long *bad_i,
                        long *bad_n)
{
    bool ok = i >= 0 && i < n;
    *bad = ok ? *bad : site;
    *bad_i = ok ? *bad_i : i;
    *bad_n = ok ? *bad_n : n;
    return ok ? i : 0;
}
#define mcl_checked_index(i, n, site, fault) \\
    mcl_check(i, n, site, &mcl_bad, &mcl_bad_i, &mcl_bad_n)
"""

DEFERRED_INT_FORM = """inline int mcl_check(int i, int n, int site, int *bad, int *bad_i,
                       int *bad_n)
{
    bool ok = (uint)i < (uint)n;
    *bad = ok ? *bad : site;
    *bad_i = ok ? *bad_i : i;
    *bad_n = ok ? *bad_n : n;
    return ok ? i : 0;
}
#define mcl_checked_index(i, n, site, fault) \\
    mcl_check(i, n, site, &mcl_bad, &mcl_bad_i, &mcl_bad_n)
"""

DEFERRED_END = """    if (mcl_bad && atomic_cmpxchg(mcl_fault, 0, mcl_bad) == 0) {
        mcl_fault[1] = (int)(mcl_bad_i & 0xffffffffL);
        mcl_fault[2] = (int)(mcl_bad_i >> 32);
        mcl_fault[3] = (int)(mcl_bad_n & 0xffffffffL);
        mcl_fault[4] = (int)(mcl_bad_n >> 32);
        mcl_fault[5] = (int)get_global_id(0);
        mcl_fault[6] = (int)get_global_id(1);
        mcl_fault[7] = (int)get_global_id(2);
    }
}
"""


FORMS = ("record", "int", "deferred", "deferred_int")


def registers(k) -> int | None:
    """The NVIDIA compiler's registers per work-item for the Kernel's source (None
    without an NVIDIA device)."""
    from mcl.opencl import vendor
    device = vendor.nvidia_device()
    if device is None:
        return None
    options = [*k.plan.options_for(device.platform.name)]
    options += [c.option(int(c.default)) for c in k.plan.compile_time if c.default is not None]
    try:
        ptx = vendor.ptx_of(device, k.source, options)
        loaded = vendor.load(ptx, k.plan.kernel, vendor.max_registers(options))
    except Exception as e:  # the driver refuses: said in the row
        return f"not loaded: {e}"
    try:
        return loaded.registers
    finally:
        loaded.unload()


def form(source: str, name: str) -> str:
    if name == "record":
        return source
    if name == "int":
        return _FUNCTION.sub(lambda _: INT_FORM, source)
    if name in ("deferred", "deferred_int"):
        if "return;" in source[source.index("__kernel"):]:
            raise ValueError("the kernel returns early: no single end to record at")
        wide = name == "deferred"
        out = _FUNCTION.sub(lambda _: DEFERRED_FORM if wide else DEFERRED_INT_FORM, source)
        head, body = out.split("__kernel", 1)
        open_at = body.index("{\n") + 2
        kind = "long" if wide else "int"
        body = (body[:open_at] + f"    int mcl_bad = 0;\n    {kind} mcl_bad_i = 0, mcl_bad_n = 0;\n"
                + body[open_at:])
        end = body.rstrip().rindex("}")
        return head + "__kernel" + body[:end] + DEFERRED_END
    raise ValueError(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--device", default=None)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--bad", action="store_true",
                    help="also check that each form reports an index outside (one run)")
    args = ap.parse_args()
    import mcl
    from mcl.diagnostics import McplError
    from mcl.opencl.conditions import keep_awake
    from mcl.versions.sizes import load_reference

    rows, ok_all = [], True
    for case, (sizes, output) in CASES.items():
        kernel, version = case.split("/")
        ref = load_reference(ROOT / "examples" / kernel)
        first = next(iter(sizes))
        sizes = {**sizes, first: max(64, int(sizes[first] * args.scale))}
        data = ref["inputs"](np.random.default_rng(1), **sizes)
        arrays = {k: v for k, v in data.items() if isinstance(v, np.ndarray)}
        scalars = {k: v for k, v in data.items() if not isinstance(v, np.ndarray)}
        want = ref["reference"](**scalars, **arrays)[output]
        path = ROOT / "examples" / kernel / f"{version}.mcpl"
        kernels = {"unchecked": mcl.compile(path, "hopper", device=args.device,
                                            check_writes=False)}
        checked = mcl.compile(path, "hopper", device=args.device)
        for name in FORMS:
            k = mcl.compile(path, "hopper", device=args.device)
            k.generated = dataclasses.replace(k.generated, source=form(checked.source, name))
            kernels[name] = k
        best = {}
        for name, k in kernels.items():
            ok = bool(np.allclose(k(**scalars, **arrays)[output], want, rtol=1e-3, atol=1e-3))
            ok_all &= ok
            reported = None
            if args.bad and name != "unchecked":
                bad = {a: v.copy() for a, v in arrays.items()}
                key = "colIdx" if "colIdx" in bad else "input"
                bad[key][len(bad[key]) // 2] = 1 << 28
                try:
                    k(**scalars, **bad)
                    reported = False
                except McplError:
                    reported = True
                ok_all &= reported
            best[name] = (float("inf"), ok, reported, registers(k))
        for _ in range(args.rounds):
            for name, k in kernels.items():
                awake = keep_awake(k.context, k.queue)
                t = k.time(repeat=args.repeats, before=awake, **scalars, **arrays)
                best[name] = (min(best[name][0], t), *best[name][1:])
        base = best["unchecked"][0]
        for name, (t, ok, reported, regs) in best.items():
            rows.append({"case": case, "form": name, "seconds": t, "ratio": t / base,
                         "correct": ok, "reports_outside": reported, "registers": regs})
            print(f"{case:20s} {name:12s} {t * 1e6:9.1f} us  {t / base:.3f}  correct {ok}"
                  f"  reports {reported}  registers {regs}", flush=True)
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "index_check_forms.json").write_text(json.dumps(
            {"repeats": args.repeats, "rounds": args.rounds, "rows": rows}, indent=1) + "\n")
    return 0 if ok_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
