"""Arrays of records (``type pt { byte b; float x; int n; }``) as kernel parameters:
the Python runtime lays them out as OpenCL C lays out the struct, makes random ones
for mcl run, compares them field by field, and says what it takes when given another
dtype. (They were a traceback: numpy did not know the type 'pt'.)"""

from __future__ import annotations

import numpy as np
import pytest

import mcl
from mcl.diagnostics import McplError

PERFECT = """module rec;
import perfect;
type pt {{ byte b; float x; int n; }}
perfect void k(const int n, pt[n] ps, pt[n] out, float[n] s) {{
  foreach (int i in n threads) {{
{body}
  }}
}}
"""
BODY = """    pt q = ps[i];
    q.x = q.x * 2.0;
    q.n = q.n + i;
    q.b = (byte) (q.b + 1);
    out[i] = q;
    s[i] = q.x + (float) q.n + (float) q.b;"""
DTYPE = np.dtype([("b", "u1"), ("x", "f4"), ("n", "i4")], align=True)


@pytest.fixture
def kernel(tmp_path, opencl_device):
    f = tmp_path / "perfect.mcpl"
    f.write_text(PERFECT.format(body=BODY))
    return mcl.compile(f, target="hopper")


def test_records_in_and_out_are_laid_out_as_c_lays_out_the_struct(kernel):
    ps = np.zeros(10, DTYPE)
    ps["b"], ps["x"], ps["n"] = np.arange(10), np.linspace(0, 1, 10), 7
    r = kernel(n=10, ps=ps)
    assert r["out"].dtype == DTYPE and DTYPE.fields["x"][1] == 4     # b padded to 4 bytes
    assert np.array_equal(r["out"]["b"], np.arange(10) + 1)
    assert np.allclose(r["out"]["x"], ps["x"] * 2)
    assert np.array_equal(r["out"]["n"], 7 + np.arange(10))
    assert np.allclose(r["s"], ps["x"] * 2 + 7 + np.arange(10) + np.arange(10) + 1)


def test_another_dtype_is_refused_with_the_record_s_layout(kernel):
    with pytest.raises(McplError) as e:
        kernel(n=4, ps=np.zeros(4, np.float32))
    d = e.value.diagnostics[0]
    assert d.code == "opencl-bad-dtype"
    assert "takes records of {b: uint8 at 0, x: float32 at 4, n: int32 at 8; 12 bytes}" \
        in d.message
    assert "np.dtype([('b', 'uint8'), ('x', 'float32'), ('n', 'int32')], align=True)" in d.hint


REFERENCE = """import numpy as np

def reference(n, ps, **_):
    out = ps.copy()
    out["x"] = ps["x"] * np.float32(2)
    out["n"] = ps["n"] + np.arange(n, dtype=np.int32)
    out["b"] = ps["b"] + np.uint8(1)
    s = out["x"] + out["n"].astype(np.float32) + out["b"].astype(np.float32)
    return {"out": out, "s": s}
"""


def test_mcl_run_makes_random_records_and_verifies_them_field_by_field(tmp_path, run_cli,
                                                                      opencl_device):
    (tmp_path / "reference.py").write_text(REFERENCE)
    (tmp_path / "k.mcpl").write_text(PERFECT.format(body=BODY))
    code, out, err = run_cli("run", "--target", "hopper", tmp_path / "k.mcpl",
                             "--set", "n=100")
    assert code == 0, err
    assert "out: matches the reference" in out and "s: matches the reference" in out
    wrong = BODY.replace("q.n + i", "q.n + 2 * i")
    (tmp_path / "k.mcpl").write_text(PERFECT.format(body=wrong))
    code, out, _ = run_cli("run", "--target", "hopper", tmp_path / "k.mcpl", "--set", "n=100")
    assert code == 1 and "out: DIFFERS FROM the reference" in out
