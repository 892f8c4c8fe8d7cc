"""Coalescing with thread indices computed by integer division and remainder: the lanes
are evaluated with C's integer semantics (``k / 4`` is rounded down), not as exact
division (which put neighbouring threads a fraction of a row apart)."""

import textwrap

import mcl


def _coalescing(tmp_path, index: str) -> list:
    src = textwrap.dedent(f"""\
        module coal;

        import hopper;

        hopper void tile(const int n = 1024, global float[n, n] a, global float[n, n] b) {{
          foreach (int bi in n / 2 blocks) {{
            foreach (int w in 8 warps) {{
              foreach (int t in 32 threads) {{
                int k = w * 32 + t;
                int r = k / 4;
                int c = k % 4;
                b[{index}] = a[{index}];
              }}
            }}
          }}
        }}
        """)
    path = tmp_path / "coal.mcpl"
    path.write_text(src)
    return [d for d in mcl.feedback(mcl.check(path)) if d.code == "feedback-coalescing"]


def test_row_and_column_from_division_and_remainder_are_coalesced(tmp_path):
    ds = _coalescing(tmp_path, "bi * 2 + r / 32, (r % 32) * 4 + c")
    assert len(ds) == 1 and ds[0].severity.name.lower() == "info"
    assert "coalesced" in ds[0].message and set(ds[0].data["arrays"]) == {"a", "b"}


def test_a_column_per_thread_is_still_uncoalesced(tmp_path):
    ds = _coalescing(tmp_path, "k, bi")
    warnings = [d for d in ds if "segments" in d.message]
    assert len(warnings) == 2 and all("stride 4096 B" in d.message for d in warnings)
