"""Semantic equivalence without an OpenCL device: each example at a level above a
leaf and its translation to the leaf, both run by the reference interpreter of
``interp.py`` (foreach units in lock-step between barriers), compute what the
example's reference.py computes, on random inputs of sizes that do not divide the
numbers of threads (32, 256, 1024) nor the 16 vector lanes. A barrier that some
units skip fails the test (DivergentBarrier)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcl.mcpl import parse_file
from mcl.translate import translate
from tests.translate.helpers import example_cases, load_reference
from tests.translate.interp import DivergentBarrier, Interpreter

#: Small sizes (the interpreter runs every unit in Python), none a multiple of 16.
SIZES = {
    "black_scholes": [{"n": 1}, {"n": 37}, {"n": 300}],
    "convolution": [{"h": 1, "w": 1, "fh": 1, "fw": 1}, {"h": 3, "w": 37, "fh": 2, "fw": 3}],
    "gesummv": [{"n": 1}, {"n": 19}],
    "histogram": [{"n": 1, "nrBuckets": 256}, {"n": 100, "nrBuckets": 7}],
    "matmul": [{"n": 1, "m": 1, "p": 1}, {"n": 3, "m": 37, "p": 5}],
    "reduction": [{"n": 1}, {"n": 37}, {"n": 300}],
    "spmv_csr": [{"nrRows": 1, "nrCols": 1, "density": 1.0},
                 {"nrRows": 37, "nrCols": 10, "density": 0.3}],
    "vector_add": [{"n": 1}, {"n": 37}, {"n": 300}],
}
#: Versions that only work for multiples (reference.py DIVISIBLE_BY): one small size.
DIVISIBLE_SIZES = {("matmul", "nvidia_v1"): [{"n": 4, "m": 33, "p": 256}]}

CASES = example_cases()
#: results of the original kernels, shared by the cases of its leaves
_ORIGINAL: dict[tuple[str, str], dict] = {}


def _run(function, args: dict, outputs: dict) -> dict:
    work = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    for name, expected in outputs.items():
        if name not in work:
            work[name] = np.zeros_like(expected)
    Interpreter(function).run(**work)
    return {name: work[name] for name in outputs}


@pytest.mark.parametrize(("file", "level", "leaf"), CASES,
                         ids=[f"{f.parent.name}/{f.stem}->{leaf}" for f, _, leaf in CASES])
def test_translation_computes_the_same(file: Path, level: str, leaf: str):
    example = file.parent.name
    reference = load_reference(example)
    sizes_list = DIVISIBLE_SIZES.get((example, file.stem), SIZES[example])
    module = parse_file(file)
    original = module.function(reference.KERNEL) or module.functions[0]
    translated = translate(module, leaf).function(original.name)
    rng = np.random.default_rng(7)
    for sizes in sizes_list:
        args = reference.inputs(rng, **sizes)
        expected = reference.reference(**args)
        key = (str(file), repr(sizes))
        if key not in _ORIGINAL:
            _ORIGINAL[key] = _run(original, args, expected)
        for which, got in (("original", _ORIGINAL[key]),
                           ("translated", _run(translated, args, expected))):
            for name, value in expected.items():
                np.testing.assert_allclose(got[name], value, **reference.TOLERANCE,
                                           err_msg=f"{which} {name}, sizes {sizes}")


GUARDED_BARRIERS = """
module scan;
import gpu;
gpu void scan(const int n = 100, const int nb = 3, dev float[nb, n] a, dev float[nb, n] out) {
    foreach (int b in nb blocks) {
        local float[1024] l;
        foreach (int t in n threads) {
            float x = a[b, t];
            l[t] = x;
            barrier(local);
            float y = l[n - 1 - t];
            barrier(local);
            for (int s = 0; s < 2; s++) {
                l[t] = y + x;
                barrier(local);
            }
            out[b, t] = l[t] + x;
        }
    }
}
"""


@pytest.mark.parametrize("n", [1, 31, 33, 70])
def test_guard_keeps_barriers_out_of_divergent_control(n: int):
    """Threads split into warps of 32 with n not a multiple of 32: the extra threads
    must skip the work but not the barriers (the interpreter fails otherwise)."""
    from mcl.mcpl import parse

    module = parse(GUARDED_BARRIERS, "scan.mcpl")
    translated = translate(module, "fermi").functions[0]
    a = np.random.default_rng(1).uniform(-1, 1, (3, n))
    expected = a[:, ::-1] + 2 * a
    out = np.zeros((3, n))
    Interpreter(translated).run(n=n, nb=3, a=a, out=out)
    np.testing.assert_allclose(out, expected)


def test_interpreter_detects_a_barrier_under_a_guard():
    """The check above can fail: the naive guard around everything is reported."""
    import dataclasses

    from mcl.mcpl import ast, parse

    module = parse(GUARDED_BARRIERS, "scan.mcpl")
    f = translate(module, "fermi").functions[0]

    def naive(node):
        # wrap the whole body of the innermost foreach in one guard
        if isinstance(node, ast.ForEach) and node.group == "threads":
            body = node.body.statements
            flat = [s for s in body if not isinstance(s, ast.If)] + \
                   [x for s in body if isinstance(s, ast.If) for x in s.then.statements]
            cond = ast.Binary("<", ast.Name("t"), ast.Name("n"))
            return dataclasses.replace(node, body=ast.Block(
                (body[0], ast.If(cond, ast.Block(tuple(flat[1:]))))))
        return None

    broken = ast.transform(f, naive)
    with pytest.raises(DivergentBarrier):
        Interpreter(broken).run(n=33, nb=1, a=np.zeros((1, 33)), out=np.zeros((1, 33)))
