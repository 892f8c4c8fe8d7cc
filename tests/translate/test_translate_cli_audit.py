"""`mcl translate` on odd command lines a new user may give: the output naming the
kernel itself, a level that moves no function."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.translate.helpers import EXAMPLES

VECTOR_ADD = EXAMPLES / "vector_add" / "perfect.mcpl"


def _run(run_cli, *argv):
    code, out, err = run_cli("translate", *argv)
    assert "Traceback" not in out + err
    return code, out, err


def test_output_naming_the_kernel_itself_is_refused_and_the_source_kept(run_cli,
                                                                        tmp_path: Path):
    kernel = tmp_path / "perfect.mcpl"
    shutil.copy(VECTOR_ADD, kernel)
    before = kernel.read_text()
    for output in (kernel, tmp_path / "." / "perfect.mcpl"):
        code, out, err = _run(run_cli, "--to", "gpu", kernel, "-o", output)
        assert code == 2 and out == ""
        assert "it is the kernel being translated" in err
        assert "-o " + str(tmp_path / "perfect_gpu.mcpl") in err
    assert kernel.read_text() == before
