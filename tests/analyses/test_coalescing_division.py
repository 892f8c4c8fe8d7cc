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
    warnings = [d for d in ds if "sectors" in d.message]
    assert len(warnings) == 2 and all("stride 4096 B" in d.message for d in warnings)
    # hopper's caches fetch 32 B sectors: 32 lanes a row apart touch 32 where 4 would do
    assert all("32 sectors of 32 B where 4 would do" in d.message for d in warnings)


def test_runs_of_four_adjacent_elements_are_judged_as_one_wide_access(tmp_path):
    """A counted loop of 4 iterations over adjacent elements becomes one 128-bit access
    per thread (mcl.opencl.vectorize): a warp then reads 32 runs of 16 B, 4 lines."""
    path = tmp_path / "runs.mcpl"
    path.write_text(textwrap.dedent("""\
        module runs;

        import hopper;

        hopper void copy(const int n = 1048576, global float[n] a, global float[n] b) {
          foreach (int bi in n / 1024 blocks) {
            foreach (int w in 8 warps) {
              foreach (int t in 32 threads) {
                for (int u = 0; u < 4; u++) {
                  int i = bi * 1024 + (w * 32 + t) * 4 + u;
                  b[i] = a[i];
                }
              }
            }
          }
        }
        """))
    ds = [d for d in mcl.feedback(mcl.check(path)) if d.code == "feedback-coalescing"]
    assert len(ds) == 1 and "are coalesced" in ds[0].message
    # the same loop with the run's elements 2 apart is not a run: judged per element
    path.write_text(path.read_text().replace("* 4 + u;", "* 8 + 2 * u;"))
    ds = [d for d in mcl.feedback(mcl.check(path)) if d.code == "feedback-coalescing"]
    assert ds and all("run of 4" not in d.message and "sectors" in d.message for d in ds)
