"""`mcl translate` on input a user gets wrong: a level that is not below the kernel's,
an assumption about sizes that the sizes contradict."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcl.diagnostics import McplError
from mcl.mcpl import parse
from mcl.translate import translate
from tests.translate.helpers import EXAMPLES

VECTOR_ADD = EXAMPLES / "vector_add" / "perfect.mcpl"

KERNEL_1000 = """\
module k;
import perfect;

perfect void add(main float[1000] c, main float[1000] a) {
  foreach (int i in 1000 threads) {
    c[i] = a[i] + 1.0;
  }
}
"""


def _run(run_cli, *argv):
    code, out, err = run_cli("translate", *argv)
    assert "Traceback" not in out + err
    return code, out + err


def test_translating_to_the_kernels_own_level_is_an_error(run_cli):
    code, text = _run(run_cli, "--to", "perfect", VECTOR_ADD)
    assert code == 1
    assert f"{VECTOR_ADD}:9:1: error: the functions of module 'vector_add_perfect' are " \
           "written for 'perfect' already" in text
    assert "translate to a level below 'perfect': accelerator, cpu" in text


def test_translating_a_leaf_to_itself_points_to_code_generation(run_cli):
    kernel = EXAMPLES / "matmul" / "fermi.mcpl"
    code, text = _run(run_cli, "--to", "fermi", kernel)
    assert code == 1 and "nothing to translate" in text
    assert "mcl gen --target fermi" in text


def test_assume_divisible_with_sizes_known_not_to_divide_is_an_error(run_cli, tmp_path: Path):
    kernel = tmp_path / "k.mcpl"
    kernel.write_text(KERNEL_1000)
    code, text = _run(run_cli, "--to", "gpu", "--assume-divisible", kernel)
    # 1000 / 1024 blocks would be 0 blocks: nothing computed, silently
    assert code == 1
    assert f"{kernel}:5:3: error: --assume-divisible: the 1000 iterations of this foreach " \
           "are not a multiple of 1024" in text
    assert "translate-not-divisible" in text and "without --assume-divisible" in text
    code, text = _run(run_cli, "--to", "gpu", kernel)
    assert code == 0 and "if (i < 1000)" in text


def test_assume_divisible_with_sizes_that_divide_translates():
    module = parse(KERNEL_1000.replace("1000", "2048"))
    with pytest.raises(McplError):
        translate(parse(KERNEL_1000), "gpu", assume_divisible=True)
    assert translate(module, "gpu", assume_divisible=True).function("add") is not None


def test_to_with_the_path_of_a_description_names_it(run_cli, tmp_path: Path):
    from mcl.hdl.library import BUNDLED

    (tmp_path / "mygpu.hdl").write_text((BUNDLED / "gpu.hdl").read_text()
                                        .replace("hardware_description gpu;",
                                                 "hardware_description mygpu;")
                                        .replace("device gpu {", "device mygpu {"))
    code, text = _run(run_cli, "--to", tmp_path / "mygpu.hdl", VECTOR_ADD)
    assert code == 1 and "--to takes the name of a hardware description" in text
    assert f"--to mygpu --hwd-path {tmp_path}" in text
    code, text = _run(run_cli, "--to", "mygpu", "--hwd-path", tmp_path, VECTOR_ADD)
    assert code == 0 and "mygpu void vector_add" in text


def test_a_description_given_as_the_kernel(run_cli):
    from mcl.hdl.library import BUNDLED

    code, text = _run(run_cli, "--to", "gpu", BUNDLED / "gpu.hdl")
    assert code == 1 and "is a hardware description; mcl translate takes an MCPL module" \
        in text
    assert "syntax error" not in text
