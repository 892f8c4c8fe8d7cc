"""The corpus of programs and descriptions in the style of earlier MCL releases
(``tests/compat/corpus``: `.mcl` files, packages in folders, legacy imports,
constants, bytes, stubs): every program checks without errors, each kernel
translates to a leaf below its level and generates OpenCL, every description
checks without errors; and kernels that are cheap to run run on PoCL and match
numpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcl.hdl import HardwareLibrary
from mcl.mcpl import ast
from mcl.mcpl.printer import print_module
from mcl.mcpl.resolve import check

CORPUS = Path(__file__).resolve().parent / "corpus"
PROGRAMS = sorted(p for p in CORPUS.rglob("*") if p.suffix in (".mcl", ".mcpl"))
DESCRIPTIONS = sorted(CORPUS.rglob("*.hdl"))
#: the leaf a kernel is generated for: the first of these below its level
LEAVES = ("cpu", "hd7970", "hopper", "fermi", "xeon_phi", "xeon_e5_2630v3")


def _id(p: Path) -> str:
    return str(p.relative_to(CORPUS))


def _kernels(module: ast.Module) -> list[ast.Function]:
    return [f for f in module.functions if any(isinstance(n, ast.ForEach)
                                               for n in ast.walk(f.body))]


def _leaf(level: str) -> str:
    lib = HardwareLibrary()
    return next(leaf for leaf in LEAVES if leaf == level or lib.is_descendant(leaf, level))


def test_the_corpus_has_programs_and_descriptions():
    assert len(PROGRAMS) >= 5 and DESCRIPTIONS
    assert any(p.suffix == ".mcl" and len(p.relative_to(CORPUS).parts) > 2 for p in PROGRAMS)


@pytest.mark.parametrize("path", PROGRAMS, ids=_id)
def test_corpus_program_checks(path):
    checked = check(path)
    assert not checked.has_errors, [str(d) for d in checked.errors]


@pytest.mark.parametrize("path", PROGRAMS, ids=_id)
def test_corpus_program_translates_and_generates(path, tmp_path):
    from mcl.opencl import generate
    from mcl.translate import translate

    checked = check(path)
    for f in _kernels(checked.module):
        leaf = _leaf(f.hardware)
        lower = translate(str(path), to=leaf)
        assert lower.function(f.name).hardware == leaf
        # The translation is a program of its own: it checks (imports found from
        # the corpus root, as with --module-path).
        again = tmp_path / f"{path.stem}_{leaf}.mcl"
        again.write_text(print_module(lower))
        rechecked = check(again, [CORPUS])
        assert not rechecked.has_errors, [str(d) for d in rechecked.errors]
        kernels = generate(str(path), leaf, function=f.name)
        assert len(kernels) == 1 and f"__kernel void {f.name}(" in kernels[0].source


@pytest.mark.parametrize("path", DESCRIPTIONS, ids=_id)
def test_corpus_description_checks(path):
    lib = HardwareLibrary([path.parent], files=[path])
    for name in lib.descriptions_in(path):
        assert not [d for d in lib.diagnostics(name) if d.is_error], name


def _harmonics(phase):
    out = np.zeros_like(phase)
    for h in range(1, 5):
        x = np.float32(2 * np.pi) * h * phase
        out += np.sqrt(np.sin(x) ** 2 + (2 * np.cos(x)) ** 2) / h
    return out


RNG = np.random.default_rng(17)
IMAGE = RNG.integers(0, 256, 5000).astype(np.uint8)
A = RNG.random(3000, np.float32)
B = RNG.random(3000, np.float32)
PHASE = RNG.random(2000, np.float32)
M = RNG.random((64, 64), np.float32)

RUNS = [
    ("vectoradd.mcl", "vectoradd", "cpu", dict(n=3000, a=A, b=B), "c", A + B),
    ("histogram.mcl", "histogram", "cpu",
     dict(n=5000, image=IMAGE, hist=np.zeros(256, np.int32)), "hist",
     np.bincount(IMAGE, minlength=256)),
    ("histogram.mcl", "threshold", "cpu", dict(n=5000, image=IMAGE, level=100), "out",
     np.where(IMAGE > 100, 255, 0)),
    ("prnu/fastnoise/fastnoise.mcl", "harmonics", "cpu", dict(n=2000, phase=PHASE), "power",
     _harmonics(PHASE)),
    ("transpose.mcl", "transpose", "hd7970", dict(n=64, a=M), "out", M.T),
    ("transpose.mcl", "transpose", "hopper", dict(n=64, a=M), "out", M.T),
]


@pytest.mark.parametrize("file, function, leaf, args, output, want", RUNS,
                         ids=[f"{r[1]}@{r[2]}" for r in RUNS])
def test_corpus_kernel_runs(file, function, leaf, args, output, want, pocl):
    import mcl

    k = mcl.compile(str(CORPUS / file), target=leaf, function=function)
    got = k(**{n: v.copy() if isinstance(v, np.ndarray) else v for n, v in args.items()})
    assert np.allclose(got[output], want, rtol=1e-4, atol=1e-5)
