"""What a built-in math function costs on an OpenCL device, in multiply-adds: each
function applied in 8 independent chains per work-item (enough work-items to fill the
device), its time less that of the same loop without it, over the time one more
multiply-add a step takes. For the target files' ``function_costs`` (mcl.analyses.timing
counts a call at that many multiply-adds of the issue slots).

    python benchmarks/opencl/math_costs.py [--platform NVIDIA] [--options ""] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

#: MCPL's built-in math and the division, as OpenCL expressions of the chain's value v
#: (about 1: after each call the chain is pulled back to 0.1 y + 0.9, so that no chain
#: overflows or goes denormal)
FUNCTIONS = {
    "sqrt": "sqrt(v)", "rsqrt": "rsqrt(v)", "exp": "exp(v)", "exp2": "exp2(v)",
    "log": "log(v)", "log2": "log2(v)", "log10": "log10(v)", "sin": "sin(v)",
    "cos": "cos(v)", "tan": "tan(v)", "tanh": "tanh(v)", "erf": "erf(v)",
    "fabs": "fabs(v)", "floor": "floor(v)", "ceil": "ceil(v)", "round": "round(v)",
    "pow": "pow(v, 1.3f)", "fmin": "fmin(v, 1.5f)", "fmax": "fmax(v, 0.5f)",
    "/": "(1.7f / v)",
}
CHAINS = 8
STEPS = 64

KERNEL = """
__kernel void k(__global float* out, const float a, const float b) {{
    float x[{chains}];
    for (int c = 0; c < {chains}; c++) x[c] = 1.0f + 0.01f * (get_global_id(0) % 16 + c);
    for (int s = 0; s < {steps}; s++) {{
        #pragma unroll
        for (int c = 0; c < {chains}; c++) {{
            {body}
        }}
    }}
    float t = 0.0f;
    for (int c = 0; c < {chains}; c++) t += x[c];
    out[get_global_id(0)] = t;
}}
"""


def source(expr: str | None, extra_fma: bool = False) -> str:
    """The kernel applying ``expr`` to each chain a step (None: only the multiply-add
    that keeps the value near 1; ``extra_fma``: one more multiply-add a step)."""
    body = "const float v = x[c]; float y = " + (expr or "v") + ";"
    body += " x[c] = y * a + b;"
    if extra_fma:
        body += " x[c] = x[c] * a + (1.0f - a);"
    return KERNEL.format(chains=CHAINS, steps=STEPS, body=body)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--platform", default="NVIDIA")
    ap.add_argument("--options", default="", help="build options (default: none)")
    ap.add_argument("--items", type=int, default=132 * 2048 * 4,
                    help="work-items (default: 4 waves of an H100)")
    ap.add_argument("--repeats", type=int, default=10)
    ap.add_argument("--out", type=Path)
    args = ap.parse_args()

    import pyopencl as cl
    plat = next(p for p in cl.get_platforms() if args.platform in p.name)
    dev = plat.get_devices()[0]
    ctx = cl.Context([dev])
    queue = cl.CommandQueue(ctx, properties=cl.command_queue_properties.PROFILING_ENABLE)
    out = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, 4 * args.items)

    def seconds(src: str, a: float) -> float:
        k = cl.Program(ctx, src).build(options=args.options.split()).k
        ts = []
        for i in range(args.repeats + 2):
            ev = k(queue, (args.items,), (256,), out, np.float32(a), np.float32(1.0 - a))
            ev.wait()
            if i >= 2:
                ts.append((ev.profile.end - ev.profile.start) * 1e-9)
        return statistics.median(ts)

    calls = args.items * CHAINS * STEPS
    base = seconds(source(None), 0.1)
    fma = (seconds(source(None, extra_fma=True), 0.1) - base) / calls
    print(f"{dev.name}: one multiply-add {fma * 1e12:.4f} ps a call in all "
          f"(loop alone {base * 1e6:.1f} us)")
    costs = {}
    for name, expr in FUNCTIONS.items():
        t = seconds(source(expr), 0.1)
        costs[name] = round(max(0.0, (t - base) / calls / fma), 1)
        print(f"  {name:6s} {costs[name]:6.1f} multiply-adds  ({t * 1e6:.1f} us)")
    if args.out:
        args.out.mkdir(parents=True, exist_ok=True)
        (args.out / "math_costs.json").write_text(json.dumps(
            {"device": dev.name, "platform": plat.name, "options": args.options,
             "fma_s_per_call": fma, "costs": costs}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
