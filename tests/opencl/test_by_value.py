"""Small constant arrays passed by value (mcl.opencl.by_value): in a kernel built
specialised, a constant-memory array whose size the build knows becomes a struct
argument; the runtime packs it; results equal the general kernel's."""

from __future__ import annotations

import textwrap
from pathlib import Path

import numpy as np
import pytest

import mcl
from mcl.opencl import generate

ROOT = Path(__file__).resolve().parents[2]
V4 = ROOT / "examples" / "convolution" / "hopper_v4.mcpl"

_SCALE = """\
    module k;
    import hopper;
    hopper void k(const int n = 256, const int m = M, global float[n] out, global float[n] x,
                  constant float[m] f) {
      foreach (int bi in n / 32 blocks) {
        foreach (int w in 1 warps) {
          foreach (int t in 32 threads) {
            float s = 0.0;
            for (int j = 0; j < m; j++) {
              s += f[j] * x[bi * 32 + t];
            }
            out[bi * 32 + t] = s;
          }
        }
      }
    }
    """


def _kernel(tmp_path, m: int, specialize: bool = True):
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(_SCALE).replace("M", str(m)))
    (k,) = generate(path, "hopper", specialize=specialize)
    return path, k


def test_a_specialised_filter_is_a_struct_argument():
    (k,) = generate(V4, "hopper", specialize=True)
    (filt,) = [a for a in k.plan.arguments if a.name == "filter"]
    assert filt.kind == "value" and filt.shape == ("fh", "fw")
    # no padding: the struct is exactly the elements the host passes (NVIDIA's driver
    # refuses an argument of another size)
    assert "typedef struct { float v[(fh) * (fw)]; } mcl_filter_value;" in k.source
    assert "const mcl_filter_value filter)" in k.source
    assert "filter.v[y * fw + x]" in k.source
    (general,) = generate(V4, "hopper")
    (filt,) = [a for a in general.plan.arguments if a.name == "filter"]
    assert filt.kind == "buffer" and "__constant float* restrict filter" in general.source


def test_only_what_fits_in_the_arguments_is_passed_by_value(tmp_path):
    _, small = _kernel(tmp_path, 200)
    _, large = _kernel(tmp_path, 300)       # 1200 bytes: more than every device takes
    assert [a.kind for a in small.plan.arguments if a.name == "f"] == ["value"]
    assert [a.kind for a in large.plan.arguments if a.name == "f"] == ["buffer"]


def test_the_runtime_packs_the_array(opencl_device, tmp_path):
    path, _ = _kernel(tmp_path, 9)
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, 256).astype(np.float32)
    f = rng.uniform(-1, 1, 9).astype(np.float32)
    for specialize in (True, False):
        k = mcl.compile(path, target="hopper", specialize=specialize)
        got = k(n=256, m=9, x=x, f=f)["out"]
        np.testing.assert_allclose(got, x * f.sum(), rtol=1e-5, atol=1e-5)


def test_the_convolution_filter_by_value_matches_the_reference(opencl_device):
    import runpy
    ref = runpy.run_path(str(V4.parent / "reference.py"))
    k = mcl.compile(V4, target="hopper", specialize=True)
    sizes = {"h": 32, "w": 128, "fh": 3, "fw": 5}
    data = ref["inputs"](np.random.default_rng(2), **sizes)
    got = k(**sizes, input=data["input"], filter=data["filter"])["output"]
    want = ref["reference"](**data)["output"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_a_filter_of_the_wrong_shape_is_refused(opencl_device):
    from mcl.diagnostics import McplError
    k = mcl.compile(V4, target="hopper", specialize=True)
    inp = np.zeros((32 + 2, 128 + 4), np.float32)
    with pytest.raises(McplError, match="filter"):
        k(h=32, w=128, fh=3, fw=5, input=inp, filter=np.zeros((3, 4), np.float32))


_RUNS = """\
    module k;
    import hopper;
    hopper void k(const int n = 256, global float[n] out, constant float[8] c) {
      foreach (int bi in n / 32 blocks) {
        foreach (int w in 1 warps) {
          foreach (int t in 32 threads) {
            reg float[4] r;
            for (int u = 0; u < 4; u++) {
              r[u] = c[4 * (t % 2) + u];
            }
            out[bi * 32 + t] = r[0] + 2.0 * r[1] + 3.0 * r[2] + 4.0 * r[3];
          }
        }
      }
    }
    """


def test_runs_of_a_by_value_array_read_right(opencl_device, tmp_path):
    """A run of 4 elements of an array passed by value reads the work-item's copy of
    the argument, element by element (no cast to another address space)."""
    path = tmp_path / "runs.mcpl"
    path.write_text(textwrap.dedent(_RUNS))
    (k,) = generate(path, "hopper", specialize=True)
    assert "__constant" not in k.source.split("__kernel")[1].split("{")[0]
    assert "float4" not in k.source
    c = np.arange(1, 9, dtype=np.float32)
    got = mcl.compile(path, target="hopper", specialize=True)(n=256, c=c)["out"]
    odd = np.arange(256) % 2
    want = np.where(odd, 5 + 12 + 21 + 32, 1 + 4 + 9 + 16).astype(np.float32)
    np.testing.assert_allclose(got, want)
