"""What the coalescing feedback claims about a warp's accesses, against the code the
OpenCL generator emits and the sectors the hardware fetches (the held-out review,
benchmarks/fidelity/heldout_kernels/REVIEW.md, sections 5, 6 and 8): a run of 4
adjacent elements is one 128-bit access only where the generator makes it one; the
fields of one record per lane are judged together; a stencil's shifted neighbour
reads are not a layout problem."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import mcl
from mcl.analyses.functions import KernelView
from mcl.opencl import generate
from tests.analyses.kernels import built

HELDOUT = Path(__file__).resolve().parents[2] / "benchmarks" / "fidelity" / "heldout_kernels"


def _coalescing(path, code: str = "feedback-coalescing") -> list:
    return [d for d in mcl.feedback(mcl.check(path), only=["functions"]) if d.code == code]


# --------------------------------------------------------------------------- 128-bit runs


def test_matvec_reduction_loop_reads_four_bytes_per_lane():
    """matvec's ``sum += A[i, j0 + k] * xs[k]`` over 256 k: the generator emits scalar
    loads (a reduction, not a copy), so a warp's request reads 4 B per lane, 32 sectors
    where 4 would do: what feedback-requests counts (31.89 per request)."""
    path = HELDOUT / "matvec" / "hopper.mcpl"
    (k,) = generate(path)
    assert "float4*)&A[" not in k.source and "vload4" not in k.source
    (d,) = [d for d in _coalescing(path) if "A[i, j0 + k]" in d.message]
    assert "run of 4" not in d.message
    assert "each reading 4 B" in d.message
    assert "32 sectors of 32 B where 4 would do" in d.message
    assert (d.data["segments"], d.data["ideal"]) == (32, 4)
    (req,) = _coalescing(path, "feedback-requests")
    spr = req.data["sectors_per_request"]
    assert abs(spr - d.data["segments"]) < 0.5


_LOOP = """\
    module k;

    import hopper;

    hopper void k(const int n = 65536, const int m = 64, global float[n] out,
                  global float[n, 64] a) {{
      foreach (int b in n / 256 blocks) {{
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            int i = b * 256 + w * 32 + t;
            float[4] x;
            float[64] y;
            y[0] = 0.0;
            float s = 0.0;
            {body}
            out[i] = s + x[0] + x[1] + x[2] + x[3] + y[0];
          }}
        }}
      }}
    }}
    """

BODIES = {
    # a copy of 4 adjacent elements: one float4 load per lane
    "copy": "for (int u = 0; u < 4; u++) { x[u] = a[i, 8 + u]; }",
    # the same elements summed: scalar loads
    "reduction": "x[0] = 0.0; for (int u = 0; u < 4; u++) { s += a[i, 8 + u]; }",
    # a copy whose trip count is a parameter: not a constant, so no runs
    "parameter bound": "x[0] = 0.0; for (int u = 0; u < m; u++) { y[u] = a[i, u]; }",
    # a copy of 6: not a multiple of 4
    "six": "x[0] = 0.0; for (int u = 0; u < 6; u++) { y[u] = a[i, 8 + u]; }",
}


@pytest.mark.parametrize("body", list(BODIES))
def test_the_analysis_claims_a_vector_access_where_the_generator_emits_one(tmp_path, body):
    """The coalescing message judges a run of 4 as one 128-bit access exactly where
    the generated code has one; vector_loop asks mcl.opencl.vectorize what the
    generator asks, loop by loop."""
    source = textwrap.dedent(_LOOP.format(body=BODIES[body]))
    view = KernelView(*built(tmp_path, source))
    (k,) = generate(tmp_path / "k.mcpl")
    emitted = "float4*)&a[" in k.source
    assert emitted == (body == "copy")
    (d,) = [d for d in _coalescing(tmp_path / "k.mcpl") if d.message.startswith("a[")]
    assert ("run of 4 adjacent elements" in d.message) == emitted
    # lanes 64 floats apart: 32 sectors either way, of which 16 or 4 would do
    assert d.data["ideal"] == (16 if emitted else 4)
    from mcl.analyses.warp_lanes import vector_loop

    claimed = [vector_loop(view, acc) is not None for acc in view.num.accesses
               if acc.name == "a"]
    assert claimed == [emitted]


@pytest.mark.parametrize("version, vector", [("hopper_v3", False), ("hopper_v5", True)])
def test_the_guards_message_claims_a_vector_run_where_the_generator_emits_one(version,
                                                                               vector):
    """matmul hopper_v3's next-phase loads copy a[i, k] and b[k1 + bq, j] in one loop of
    4, and b's elements are 32 apart: the loop stays scalar (no float4 load of a), so
    feedback-guards must not say a run of a becomes a 128-bit access after a run-time
    test; hopper_v5 copies a in a loop of its own, which the generator vectorises."""
    path = Path(__file__).resolve().parents[2] / "examples" / "matmul" / f"{version}.mcpl"
    (k,) = generate(path)
    assert ("float4*)&a[" in k.source) == vector
    (d,) = [d for d in mcl.feedback(mcl.check(path), only=["guards"])
            if d.code == "feedback-guards"]
    assert ("becomes a 128-bit access" in d.message) == vector


# --------------------------------------------------------------------------- records


def test_nbody_record_fields_once_per_thread_are_not_uncoalesced():
    """nbody's pos[i, 0..2] loads and acc[i, 0..3] stores, once per thread: each lane
    uses the fields of its own 16 B record, and the warp's first access fetches the 16
    sectors its 32 records need. No "where 4 would do", no advice to change the
    layout: one info per group, that one 128-bit access per lane would do."""
    ds = _coalescing(HELDOUT / "nbody" / "hopper.mcpl")
    assert not [d for d in ds if d.severity.name == "WARNING"]
    assert not [d for d in ds if "would do" in d.message or
                "should vary with" in (d.hint or "")]
    groups = {d.data["array"]: d for d in ds if "accesses" in d.data}
    assert set(groups) == {"pos", "acc"}
    assert groups["pos"].data["accesses"] == ["pos[i, 0]", "pos[i, 1]", "pos[i, 2]"]
    assert len(groups["acc"].data["accesses"]) == 4
    for d in groups.values():
        assert d.severity.name == "INFO"
        assert d.data["segments"] == d.data["ideal"] == 16
        assert "one 128-bit access" in d.message


_FIELDS = """\
    module k;

    import hopper;

    hopper void k(const int n = 65536, global float[n, 4] out, global float[n, 4] pos) {{
      foreach (int b in n / 256 blocks) {{
        foreach (int w in 8 warps) {{
          foreach (int t in 32 threads) {{
            int i = b * 256 + w * 32 + t;
            {body}
          }}
        }}
      }}
    }}
    """


def test_one_field_of_a_record_is_still_uncoalesced(tmp_path):
    """A lane that reads one field of its record uses 4 of its 16 bytes: the warning
    stands, with the advice to let the last index vary with the lane."""
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(_FIELDS.format(body="out[i, 0] = pos[i, 0];")))
    ds = [d for d in _coalescing(path) if "pos[i, 0]" in d.message]
    (d,) = ds
    assert d.severity.name == "WARNING"
    assert "16 sectors of 32 B where 4 would do" in d.message


def test_two_fields_of_a_long_row_are_still_uncoalesced(tmp_path):
    """Two fields of rows of 32 floats, once per thread: the lanes use 8 of each 32 B
    sector they touch, not the fields of one small record; both warnings stand."""
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(_FIELDS.format(body="out[i, 0] = pos[i, 0] + pos[i, 1];")
                                    .replace("float[n, 4] pos", "float[n, 32] pos")))
    ds = [d for d in _coalescing(path) if d.message.startswith("pos[")]
    assert len(ds) == 2 and all(d.severity.name == "WARNING" for d in ds)
    assert all("32 sectors of 32 B where 4 would do" in d.message for d in ds)


# --------------------------------------------------------------------------- stencils


@pytest.mark.parametrize("kernel, reads", [
    ("stencil1d", ["vin[i - 1]", "vin[i + 1]"]),
    ("jacobi2d", ["grid[i, j - 1]", "grid[i, j + 1]"]),
])
def test_a_stencils_shifted_reads_are_not_a_layout_problem(kernel, reads):
    """vin[i - 1] beside vin[i]: 5 sectors where 4 would do is right, but padding rows
    or a row segment per warp cannot remove the shift. The extra sector holds the
    neighbouring warp's elements (the cache serves it); a tile with its halo in shared
    memory would issue one load per element."""
    ds = _coalescing(HELDOUT / kernel / "hopper.mcpl")
    for text in reads:
        (d,) = [d for d in ds if d.message.startswith(text + ":")]
        assert d.severity.name == "INFO"
        assert "5 sectors of 32 B where 4 would do" in d.message
        assert "1 more sector" in d.message and "neighbouring warp" in d.message
        assert "pad the rows" not in (d.hint or "")
        assert "halo" in d.hint and "one global load per element" in d.hint
        assert abs(d.data["shift"]) == 1


def test_a_row_that_does_not_start_on_a_sector_keeps_the_padding_advice(tmp_path):
    """A lone read whose rows start off a sector boundary (rows of 36 floats, a warp on
    row 1): no neighbour read beside it, so the padding advice stands."""
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent("""\
        module k;

        import hopper;

        hopper void k(const int n = 4096, global float[n, 32] out, global float[n, 36] a) {
          foreach (int b in n / 8 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                out[b * 8 + w, t] = a[b * 8 + w + 1, t];
              }
            }
          }
        }
        """))
    (d,) = [d for d in _coalescing(path) if d.message.startswith("a[")]
    assert d.severity.name == "WARNING"
    assert "pad the rows" in d.hint


# --------------------------------------------------------------------------- rows


def _conv3x3(w: int) -> list:
    return [d for d in mcl.feedback(mcl.check(HELDOUT / "conv3x3" / "hopper.mcpl"),
                                    values={"w": w}, only=["functions"])
            if d.code == "feedback-coalescing"]


def test_rows_off_a_sector_boundary_are_judged_over_the_loops():
    """conv3x3's img rows are w + 2 = 4098 floats (16392 B, not a multiple of 32 B):
    the first row and shift touch 4 sectors, but a warp's request touches 4.83 on
    average over the rows and shifts (what feedback-requests counts), so the accesses
    are not "optimal"; padding the rows to 4104 elements gives (4 + 5 + 5) / 3."""
    ds = _conv3x3(4096)
    assert not [d for d in ds if "optimal" in d.message]
    (d,) = [d for d in ds if d.message.startswith("img[i + y, j + x]:")]
    assert d.data["segments"] == pytest.approx(4.83, abs=0.01)
    assert d.data["padded_segments"] == pytest.approx(4.67, abs=0.01)
    assert "rows of 16392 B are not a multiple of 32 B" in d.message
    assert "pad the rows of img to a multiple of 32 B (4098 -> 4104 elements)" in d.hint


def test_rows_on_a_sector_boundary_are_not_flagged():
    """With w = 4094 img's rows are 4096 floats: every row starts on a sector, and the
    window's shifts alone are the stencil's (the cache serves their extra sector): no
    message. Now out's rows (4094 floats) start off one: padding them to 4096 removes
    all of the excess, a warning."""
    ds = _conv3x3(4094)
    assert not [d for d in ds if d.message.startswith("img[")]
    (d,) = [d for d in ds if d.message.startswith("out[i, j]:")]
    assert d.severity.name == "WARNING"
    assert d.data["padded_segments"] == 4
    assert "(4094 -> 4096 elements)" in d.hint


def test_four_adjacent_elements_over_a_loop_get_the_run_advice():
    """matmul hopper_v4's stores of c: each thread writes 4 adjacent elements over loop
    ej, one scalar store each (the generated code has no float4 store of c), 16 sectors
    where 4 would do; written as a run of 4 (hopper_v6), the generator makes them one
    128-bit store. The advice says so instead of asking the last index to vary with t,
    which it already does."""
    path = Path(__file__).resolve().parents[2] / "examples" / "matmul" / "hopper_v4.mcpl"
    (k,) = generate(path)
    assert "float4*)&c[" not in k.source
    (d,) = [d for d in _coalescing(path) if d.message.startswith("c[ci, cj]:")]
    assert "(each writing 4 B) touches 16 sectors of 32 B where 4 would do" in d.message
    assert "4 adjacent elements over loop ej" in d.hint and "128-bit" in d.hint
