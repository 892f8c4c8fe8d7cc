"""What NVIDIA's compiler makes of the convolution kernels: Lift's register-blocked
candidates (stencil-2d-register-blocking, the first ``--choices``) beside the MCPL
versions written for the leaf (hopper_v3 and the versions reference.py builds
specialised), all at the paper size (4096 x 4096 outputs, 9 x 9 filter). Each kernel's
PTX (the NVIDIA OpenCL program binary) through ptxas and cuobjdump: its registers and,
from the SASS, the instructions a work-item executes by kind (global loads by width,
multiply-adds, constant-bank loads, all). No kernel is run.

What it answers: whether the loads a Lift candidate repeats (each filter row copies the
c input rows it needs, so an input row is copied once for every filter row that reads
it) reach the machine code, or whether the compiler keeps the rows it loaded before.

    . benchmarks/gpu_setup.sh
    python3 benchmarks/lift/conv_sass.py --out DIR

Writes DIR/conv_sass.json, DIR/conv_sass.md and each kernel's SASS under DIR/sass/.
Exits 2 without an NVIDIA OpenCL device.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks" / "opencl"))
from probe_sass import sass_figures  # noqa: E402

EXAMPLE = ROOT / "examples" / "convolution"
MCPL_VERSIONS = ("hopper_v3", "hopper_v4", "hopper_v5")


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def lift_sources(sizes: dict, choices: int) -> list[tuple[str, str, list[str]]]:
    """(name, OpenCL source, build options) of the first ``choices`` register-blocked
    candidates of the program derived from perfect.mcpl, generated for a GPU's limits."""
    from mcl.lift import macros  # noqa: F401  (registers the macro rules)
    from mcl.lift import stencil_blocking as S
    from mcl.lift.codegen import Options, generate
    from mcl.lift.from_mcpl import derive
    from mcl.lift.ir import bind_sizes
    from mcl.lift.rules import RULES, Limits, rewrites
    limits = Limits(max_work_group=1024, local_memory=48 * 1024, warp_size=32)
    bound = bind_sizes(derive(EXAMPLE / "perfect.mcpl", None, constants=sizes).program, sizes)
    dims = (sizes["h"], sizes["w"], sizes["fh"], sizes["fw"])
    shapes = S.blocking_choices(*dims, limits)
    out = []
    for rw in rewrites(bound, [RULES["stencil-2d-register-blocking"]], limits)[:choices]:
        c, r, l1, l0, w = shapes[rw.choice]
        gen = generate(rw.result, sizes, Options(local_memory=limits.local_memory))
        out.append((f"lift_c{c}_r{r}_g{l1}x{l0}_w{w}", gen.source, []))
    return out


def mcpl_sources(sizes: dict, leaf: str) -> list[tuple[str, str, list[str]]]:
    """(name, OpenCL source, build options) of the MCPL versions, each built as
    ``mcl run`` builds it (reference.py's SPECIALIZE: the sizes as constants)."""
    from mcl.opencl.generate import generate
    from mcl.versions.sizes import load_reference, written_for_sizes
    ref = load_reference(EXAMPLE)
    out = []
    for stem in MCPL_VERSIONS:
        path = EXAMPLE / f"{stem}.mcpl"
        (k,) = generate(path, leaf, specialize=written_for_sizes(path, ref))
        options = [*k.plan.options_for("NVIDIA CUDA"),
                   *(c.option(int(sizes[c.name])) for c in k.plan.compile_time)]
        out.append((f"mcpl_{stem}", k.source, options))
    return out


#: SASS opcodes counted, by the name the table gives them
KINDS = (("LDG.128", r"\bLDG\.E\.128"), ("LDG other", r"\bLDG\.E(?!\.128)"),
         ("LDS", r"\bLDS\b"), ("FFMA", r"\bFFMA\b"), ("FMUL/FADD", r"\bF(MUL|ADD)\b"),
         ("LDC", r"\bLDC\b"), ("STG", r"\bSTG\b"))


def figures(device, name: str, source: str, options: list[str], work: Path) -> dict:
    """Registers and instruction counts of one kernel's SASS (straight-line code: every
    loop of these kernels is unrolled, so a count is what a work-item executes), the SASS
    kept under ``work``/sass/ by probe_sass.sass_figures."""
    from mcl.opencl.vendor import ptx_of
    try:
        ptx = ptx_of(device, source, options)
    except Exception as e:  # noqa: BLE001 - a build the driver refuses is a row
        return {"name": name, "error": str(e).splitlines()[0][:200]}
    fig = sass_figures(ptx, work, name)
    if "sass" in fig:
        return {"name": name, "error": fig["sass"]}
    sass = (work / "sass" / f"{name}.sass.txt").read_text()
    insns = [ln for ln in sass.splitlines() if re.match(r"\s*/\*[0-9a-f]{4,}\*/", ln)]
    counts = Counter(kind for ln in insns for kind, pattern in KINDS if re.search(pattern, ln))
    return {"name": name, "registers": fig["registers"], "instructions": len(insns),
            "branches": fig["branches"], **dict(counts)}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, help="folder for the table and the SASS")
    ap.add_argument("--choices", type=int, default=6,
                    help="register-blocked Lift candidates (default 6)")
    ap.add_argument("--leaf", default="hopper")
    args = ap.parse_args(argv)
    from mcl.opencl.vendor import nvidia_device
    device = nvidia_device()
    if device is None:
        log("conv_sass.py reads NVIDIA's machine code and found no NVIDIA OpenCL device")
        return 2
    from mcl.versions.sizes import load_reference
    sizes = dict(load_reference(EXAMPLE)["PAPER_SIZES"][0])
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, source, options in [*mcpl_sources(sizes, args.leaf),
                                  *lift_sources(sizes, args.choices)]:
        rows.append(figures(device, name, source, options, out))
        log(f"{name}: {rows[-1]}")
    (out / "conv_sass.json").write_text(json.dumps({"sizes": sizes, "rows": rows}, indent=1))
    cols = ["registers", "instructions", *(k for k, _ in KINDS), "branches"]
    lines = [f"# Convolution {sizes}: the SASS of the MCPL versions and Lift's candidates", "",
             "| kernel | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for r in rows:
        lines.append(f"| {r['name']} | " + (" | ".join(str(r.get(c, 0)) for c in cols)
                                            if "error" not in r else r["error"]) + " |")
    (out / "conv_sass.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
