"""Register arrays that only carry device memory into on-chip memory
(mcl.analyses.staging): named where both sides are runs of 4, the target copies
asynchronously and one block is resident per SM; silent for a transposed store, for
a kernel with two blocks per SM, for a version that copies straight, and at a level
whose target has no asynchronous copies."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import feedback

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _staging(path: Path | str, specialize: bool = False) -> list:
    return [d for d in feedback(str(path), only=["staging"], specialize=specialize)
            if d.code == "feedback-staging"]


def test_the_next_tile_of_b_through_registers_is_named():
    path = EXAMPLES / "matmul" / "hopper_v11.mcpl"
    (d,) = _staging(path)     # bNext; not aNext, whose store into l_a is transposed
    assert d.message.startswith("'bNext' only carries b3 into l_b (16 registers per thread)")
    assert "asynchronous copies on 'hopper'" in d.message
    assert "`l_b[...] = b3[...]`" in d.hint
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if "reg float[bk * bn / nrThreads] bNext;" in text)
    assert d.span.line == line
    assert d.data["registers"] == 16


def test_no_message_where_another_block_hides_the_loads():
    # v10 stages b's tile too, but built as it is run (sizes specialised) two of its
    # blocks are resident per SM: copied straight, it ran 4% slower on the H100
    # (benchmarks/results/perf/round50)
    assert _staging(EXAMPLES / "matmul" / "hopper_v10.mcpl", specialize=True) == []
    # v11 built so is still at one block
    assert len(_staging(EXAMPLES / "matmul" / "hopper_v11.mcpl", specialize=True)) == 1


def test_a_version_that_copies_straight_has_nothing_to_stage():
    assert _staging(EXAMPLES / "matmul" / "hopper_v12.mcpl") == []


def test_no_message_where_the_target_has_no_asynchronous_copies(tmp_path):
    # the same kernel at fermi (fermi.target has no [async_copy])
    text = (EXAMPLES / "matmul" / "hopper_v11.mcpl").read_text()
    f = tmp_path / "v11_fermi.mcpl"
    f.write_text(text.replace("import hopper;", "import fermi;").replace(
        "hopper void", "fermi void"))
    assert _staging(f) == []
