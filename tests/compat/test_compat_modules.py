"""MCPL modules of earlier releases (issue 17, items 4, 5 and 9): the first release's
`import math;` / `import atomics;`, packages on disk with `.mcl` files, and
`perfect` known without an import; and the bad input around them."""

from __future__ import annotations

from pathlib import Path

from mcl.mcpl.resolve import check


def _write(root: Path, rel: str, text: str) -> Path:
    f = root / rel
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return f


def _codes(checked):
    return [d.code for d in checked.diagnostics if d.is_error]


def test_legacy_math_and_atomics_are_the_bundled_library(tmp_path):
    f = _write(tmp_path, "legacy.mcl", """module legacy;
import perfect;
import math;
import atomics;

perfect void count(const int n = 64, int[1] total, float[n] a) {
    foreach (int i in n threads) {
        a[i] = square(a[i]);
        atomicInc(total[0]);
    }
}
""")
    checked = check(f)
    assert not checked.has_errors, checked.errors
    assert checked.modules["math"].module.name == "math"
    info = checked.modules["atomics"].functions["atomicInc"]
    assert info.is_library and info.module == "atomics"
    assert "total" in checked.writes("count")


def test_a_local_module_named_math_wins_over_the_legacy_library(tmp_path):
    _write(tmp_path, "math.mcl", "module math;\nperfect float cube(const float x) {\n"
                                 "    return x * x * x;\n}\n")
    f = _write(tmp_path, "k.mcl", """module k;
import math;
perfect void k(const int n = 8, float[n] a) {
    foreach (int i in n threads) { a[i] = cube(a[i]); }
}
""")
    checked = check(f)
    assert not checked.has_errors, checked.errors
    assert "cube" in checked.modules["math"].functions


COMPLEX = """package lib.math;
module complex;

perfect float cabs(const float re, const float im) {
    return sqrt(re * re + im * im);
}
"""

USER = """package prnu.fastnoise;
module f;

import lib.math.complex;

perfect void magnitude(const int n = 64, float[n] out, float[n] re, float[n] im) {
    foreach (int i in n threads) {
        out[i] = cabs(re[i], im[i]);
    }
}
"""


def test_a_package_root_is_found_from_the_importers_package(tmp_path):
    _write(tmp_path, "lib/math/complex.mcl", COMPLEX)
    f = _write(tmp_path, "prnu/fastnoise/f.mcl", USER)
    checked = check(f)
    assert not checked.has_errors, checked.errors
    assert Path(checked.modules["lib.math.complex"].module.file).name == "complex.mcl"


def test_module_path_and_mcl_path_hold_package_roots(tmp_path, monkeypatch, run_cli):
    _write(tmp_path / "libs", "lib/math/complex.mcpl", COMPLEX)
    app = _write(tmp_path, "app/main.mcl", USER.replace("package prnu.fastnoise;\n", ""))
    assert "mcpl-unknown-import" in _codes(check(app))
    assert not check(app, [tmp_path / "libs"]).has_errors
    code, out, err = run_cli("check", "--module-path", tmp_path / "libs", app)
    assert code == 0, out + err
    code, out, err = run_cli("gen", "--target", "cpu", "--module-path", tmp_path / "libs", app,
                             "-o", tmp_path / "out")
    assert code == 0, out + err
    assert "inline float cabs(" in (tmp_path / "out" / "magnitude.cl").read_text()
    code, _, err = run_cli("check", "--module-path", tmp_path / "none", app)
    assert code == 2 and "--module-path" in err
    monkeypatch.setenv("MCL_PATH", str(tmp_path / "libs"))
    assert not check(app).has_errors


def test_an_import_that_names_two_files_is_an_error(tmp_path):
    _write(tmp_path, "lib/math/complex.mcl", COMPLEX)
    _write(tmp_path, "lib/math/complex.mcpl", COMPLEX)
    f = _write(tmp_path, "prnu/fastnoise/f.mcl", USER)
    checked = check(f)
    assert _codes(checked) == ["mcpl-ambiguous-import"]   # no follow-on errors
    d = checked.errors[0]
    assert (d.span.line, d.span.column) == (4, 1) and "complex.mcl" in d.message
    assert d.hint


def test_a_package_declaration_that_does_not_match_the_place(tmp_path):
    _write(tmp_path, "lib/math/complex.mcl", COMPLEX.replace("lib.math", "lib.maths"))
    f = _write(tmp_path, "prnu/fastnoise/f.mcl", USER)
    checked = check(f)
    d = next(d for d in checked.errors if d.code == "mcpl-package-mismatch")
    assert "declares package 'lib.maths', not 'lib.math'" in d.message
    assert d.span.line == 4 and "package lib.math;" in d.hint
    assert d.related and d.related[0].span.file.endswith("complex.mcl")
    # Checked by itself, the file is warned that its package is not its place.
    alone = check(tmp_path / "lib/math/complex.mcl")
    assert [d.code for d in alone.diagnostics] == ["mcpl-package-place"]
    assert alone.diagnostics[0].span.line == 1


def test_perfect_is_known_without_an_import(tmp_path):
    f = _write(tmp_path, "p.mcl", """module p;
perfect void add(const int n = 16, float[n] c, float[n] a) {
    foreach (int i in n threads) {
        c[i] = a[i];
    }
}
""")
    checked = check(f)
    assert not checked.has_errors, checked.errors
    # Other levels still need their import.
    g = _write(tmp_path, "g.mcl", "module g;\ngpu void k(const int n = 16, float[n] a) {\n"
                                  "    foreach (int b in n blocks) { foreach (int t in 1 threads)"
                                  " { a[b] = 0.0; } }\n}\n")
    assert "mcpl-hardware-not-imported" in _codes(check(g))
