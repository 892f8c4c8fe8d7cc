"""MCPL forms of earlier releases (issue 17, items 6, 7, 8 and 10): top-level
constants, the byte type, library stubs with `mcl_builtin_read/write` and
`reg main` parameters, and view sizes the checker cannot decide. Each is checked,
translated and, where it matters, generated and run on the CPU (PoCL)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from mcl.mcpl.builder import parse, parse_whole
from mcl.mcpl.printer import print_module
from mcl.mcpl.resolve import check


def _write(root: Path, rel: str, text: str) -> Path:
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return f


def _errors(checked):
    return [(d.code, d.message) for d in checked.diagnostics if d.is_error]


CONSTANTS = """package shapes;
module circle;

// the circle's constant
const float PI = 3.14159265358979323846;
const int N = 16;

perfect float area(const float r) {
    return PI * r * r;
}
"""

USES_CONSTANTS = """module scale;
import perfect;
import shapes.circle;

const int M = N * 2;

perfect void scale(const int n = 64, float[n] out, float[n] r) {
    foreach (int i in n threads) {
        float[M] tmp;
        tmp[0] = PI;
        out[i] = area(r[i]) + tmp[0] * M;
    }
}
"""


def test_constants_parse_print_and_are_imported(tmp_path):
    f = _write(tmp_path, "shapes/circle.mcl", CONSTANTS)
    module = parse(f.read_text(), str(f))
    assert module == parse_whole(f.read_text(), str(f))
    assert [(c.name, c.type.name) for c in module.constants] == [("PI", "float"), ("N", "int")]
    assert module.constants[0].comments == ("// the circle's constant",)
    printed = print_module(module)
    assert "const float PI = 3.141592653589793;" in printed
    again = parse(printed, str(f)).constants
    assert [(c.name, c.type.name, c.value.value) for c in again] == \
        [(c.name, c.type.name, c.value.value) for c in module.constants]
    user = _write(tmp_path, "scale.mcl", USES_CONSTANTS)
    checked = check(user, [tmp_path])
    assert _errors(checked) == []
    assert set(checked.constants) == {"PI", "N", "M"}


def test_constants_generate_and_run(tmp_path, pocl):
    import mcl

    _write(tmp_path, "shapes/circle.mcl", CONSTANTS)
    user = _write(tmp_path, "scale.mcl", USES_CONSTANTS)
    k = mcl.compile(str(user), target="cpu", search_path=[tmp_path])
    assert "__constant float PI" in k.source and "__constant int M = 16 * 2;" in k.source
    r = np.linspace(0, 2, 64, dtype=np.float32)
    out = k(n=64, r=r)["out"]
    assert np.allclose(out, np.float32(np.pi) * r * r + np.float32(np.pi) * 32, rtol=1e-5)


@pytest.mark.parametrize("text, code, hint", [
    ("const int A = B + 1;\nconst int B = 2;", "mcpl-constant-order", "move `const ... B"),
    ("const int A = A + 1;", "mcpl-constant-order", "without its own name"),
    ("const int A = 1;\nconst int A = 2;", "mcpl-redeclared", "rename"),
    ("const float[2] A = 1;", "mcpl-bad-constant", "a number or bool"),
    ("const int A = C;", "mcpl-undeclared", "defined above it"),
])
def test_bad_constants_are_located(tmp_path, text, code, hint):
    f = _write(tmp_path, "bad.mcl", f"module bad;\n{text}\n")
    checked = check(f)
    d = next(d for d in checked.errors if d.code == code)
    assert d.span.line >= 2 and d.span.column >= 1
    assert hint in d.hint


def test_writing_a_constant_is_an_error(tmp_path):
    f = _write(tmp_path, "w.mcl", """module w;
const int N = 4;
perfect void k(const int n = 8, float[n] a) {
    foreach (int i in n threads) { N = 3; a[i] = N; }
}
""")
    assert ("mcpl-write-const", "'N' is const and cannot be written") in _errors(check(f))


BYTES = """module bytes;

perfect void threshold(const int n = 1024, byte[n] out, byte[n] img, const int level = 128) {
    foreach (int i in n threads) {
        byte v = img[i];
        if (v > level) {
            out[i] = (byte) (255 - v);
        } else {
            out[i] = v / 2 + img[0] % 2;
        }
    }
}
"""


def test_byte_is_an_unsigned_8_bit_type(tmp_path, pocl):
    import mcl

    f = _write(tmp_path, "bytes.mcl", BYTES)
    checked = check(f)
    assert _errors(checked) == []
    k = mcl.compile(str(f), target="cpu")
    assert "__global uchar* restrict out" in k.source and "(uchar)" in k.source
    assert dict((a.name, a.dtype) for a in k.plan.arguments)["img"] == "uint8"
    img = np.random.default_rng(1).integers(0, 256, 1000).astype(np.uint8)
    out = k(n=1000, img=img, level=100)["out"]
    assert out.dtype == np.uint8
    want = np.where(img > 100, 255 - img, img // 2 + img[0] % 2).astype(np.uint8)
    assert np.array_equal(out, want)


def test_byte_arithmetic_is_int_as_in_c(tmp_path):
    f = _write(tmp_path, "b.mcl", """module b;
perfect void k(const int n = 8, byte[n] a, float[n] x) {
    foreach (int i in n threads) { float y = 1.5 + a[i]; int z = a[i] << 2; x[i] = y + z; }
}
""")
    checked = check(f)
    assert _errors(checked) == []


STUBS = """module stubs;
import perfect;

// OpenCL's fract: the fraction of x, its floor written to whole.
perfect float fract(const float x, reg main float whole) {
    mcl_builtin_read(x);
    mcl_builtin_write(whole);
    return 0.0;
}

perfect void split(const int n = 256, float[n] frac, float[n] whole, float[n] x) {
    foreach (int i in n threads) {
        float w;
        frac[i] = fract(x[i], w);
        whole[i] = w;
    }
}

perfect void split_direct(const int n = 256, float[n] frac, float[n] whole, float[n] x) {
    foreach (int i in n threads) {
        frac[i] = fract(x[i], whole[i]);
    }
}
"""


def test_stubs_declare_their_effect(tmp_path):
    f = _write(tmp_path, "stubs.mcl", STUBS)
    checked = check(f)
    assert _errors(checked) == []
    assert checked.writes("fract") == {"whole"} and checked.reads("fract") == {"x"}
    assert "whole" in checked.writes("split_direct")
    p = checked.module.function("fract").params[1]
    assert (p.space, p.alternatives) == ("reg", ("main",))
    assert checked.symbol(p).space == "main"    # the one visible outside the threads
    assert "reg main float whole" in print_module(checked.module)


@pytest.mark.parametrize("function", ["split", "split_direct"])
def test_stubs_call_the_targets_function(tmp_path, pocl, function):
    import mcl

    f = _write(tmp_path, "stubs.mcl", STUBS)
    k = mcl.compile(str(f), function=function, target="cpu")
    assert "fract(x[i], &" in k.source and "mcl_builtin" not in k.source
    x = (np.random.default_rng(2).random(200).astype(np.float32) - 0.5) * 10
    r = k(n=200, x=x)
    assert np.allclose(r["frac"], x - np.floor(x)) and np.array_equal(r["whole"], np.floor(x))


def test_stubs_translate_with_their_spaces(tmp_path):
    from mcl.translate import translate

    f = _write(tmp_path, "stubs.mcl", STUBS)
    lower = translate(str(f), to="gpu")
    p = lower.function("fract").params[1]
    assert (p.space, p.alternatives) == ("reg", ("dev",))
    g = _write(tmp_path, "stubs_gpu.mcl", print_module(lower))
    assert _errors(check(g)) == []


def test_stub_markers_name_parameters(tmp_path):
    f = _write(tmp_path, "s.mcl", """module s;
perfect void f(const float x) { mcl_builtin_read(x + 1.0); mcl_builtin_read(); }
""")
    codes = [c for c, _ in _errors(check(f))]
    assert codes.count("mcpl-bad-argument") == 1 and codes.count("mcpl-arg-count") == 1


VIEWS = """module view;
import gpu;

gpu void k(const int n = 1024, const int p = 64, const int nrThreadsM = 16, dev float[n] a) {
    foreach (int b in n / p blocks) {
        int nrLoadIters = p / nrThreadsM;
        local float[p] l_a as float[nrLoadIters][nrThreadsM] l_a2;
        foreach (int t in p threads) {
            l_a[t] = a[b * p + t];
            barrier(local);
            a[b * p + t] = l_a2[t / nrThreadsM][t % nrThreadsM];
        }
    }
}
"""


def test_undecidable_view_sizes_are_a_warning(tmp_path):
    f = _write(tmp_path, "view.mcl", VIEWS)
    checked = check(f)
    assert _errors(checked) == []
    w = [d for d in checked.diagnostics if d.code == "mcpl-view-size-unknown"]
    assert len(w) == 1 and w[0].span.line == 7 and "equal with the example values" in w[0].message


def test_view_sizes_that_differ_for_the_example_values_are_an_error(tmp_path):
    f = _write(tmp_path, "view.mcl", VIEWS.replace("[nrThreadsM] l_a2", "[nrThreadsM + 1] l_a2"))
    d = next(d for d in check(f).errors if d.code == "mcpl-view-size")
    assert "has 68 elements but 'l_a' has 64 (with the example values" in d.message
    assert d.span.line == 7


def test_view_sizes_without_example_values_are_a_warning(tmp_path):
    f = _write(tmp_path, "view.mcl", VIEWS.replace(
        "const int p = 64", "const int p = 64, const int nrLoadIters").replace(
        "        int nrLoadIters = p / nrThreadsM;\n", ""))
    checked = check(f)
    assert _errors(checked) == []
    assert "cannot decide" in next(d.message for d in checked.diagnostics
                                   if d.code == "mcpl-view-size-unknown")
