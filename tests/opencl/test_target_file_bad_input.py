"""A user's ``.target`` file (how a leaf level maps to OpenCL) that is wrong: each mistake
is an error naming the file, never a traceback and never options or limits taken
silently from a value of the wrong shape."""

from __future__ import annotations

import pytest

from mcl.diagnostics import McplError
from mcl.opencl import load_target
from tests.hdl.test_validate import VALID

GOOD = """\
[spaces]
main = { qualifier = "__global", fence = "CLK_GLOBAL_MEM_FENCE" }
near = { qualifier = "__local", fence = "CLK_LOCAL_MEM_FENCE" }
reg = { qualifier = "__private", fence = "CLK_LOCAL_MEM_FENCE" }

[par_groups]
blocks = { ids = "group" }
threads = { ids = "local" }

[device]
local_memory = 32768
max_work_group_size = 128
"""


def _level(tmp_path, target: str | bytes):
    (tmp_path / "user.hdl").write_text(VALID)
    file = tmp_path / "user.target"
    if isinstance(target, bytes):
        file.write_bytes(target)
    else:
        file.write_text(target)
    return file


def test_a_good_target_file_loads(tmp_path):
    _level(tmp_path, GOOD + '[platform.NVIDIA]\nbuild_options = ["-cl-nv-verbose"]\n')
    t = load_target("user", [tmp_path])
    assert t.local_memory == 32768 and t.max_work_group_size == 128
    assert t.platform_options == (("NVIDIA", ("-cl-nv-verbose",)),)


@pytest.mark.parametrize("old, new, says", [
    (GOOD.split("[par_groups]")[0], 'spaces = "global"\n', "'spaces' must be a table"),
    ('main = { qualifier = "__global", fence = "CLK_GLOBAL_MEM_FENCE" }', 'main = "__global"',
     "[spaces] main must be a table, not a string"),
    ('blocks = { ids = "group" }', 'blocks = "group"',
     "[par_groups] blocks must be a table, not a string"),
    ("main = { qualifier", "main = { qualifer",
     "[spaces] main: unknown key 'qualifer'"),
    ("[par_groups]", "[par_group]", "unknown table or key 'par_group'"),
    ("local_memory = 32768", 'local_memory = "32k"',
     "[device] local_memory must be a positive whole number, not '32k'"),
    ("local_memory = 32768", "local_memory = -1",
     "[device] local_memory must be a positive whole number, not -1"),
    ("max_work_group_size = 128", "max_work_group_size = 0",
     "[device] max_work_group_size must be a positive whole number, not 0"),
    ("max_work_group_size = 128", 'build_options = "-cl-mad-enable"',
     "[device] build_options must be a list of strings"),
    (GOOD, "device = 3\n" + GOOD.split("[device]")[0],
     "'device' must be a table ([device]), not a number"),
    ("[device]", '[platform]\nNVIDIA = "-O3"\n[device]',
     "[platform] NVIDIA must be a table, not a string"),
    ("[device]", "[platform.NVIDIA]\nbuild_options = 3\n[device]",
     "[platform.NVIDIA] build_options must be a list of strings, not 3"),
], ids=["spaces not a table", "space not a table", "par_group not a table", "misspelt key",
        "misspelt table", "local memory a string", "local memory negative",
        "work-group size zero", "build options one string", "device a number",
        "platform not a table", "platform options a number"])
def test_a_wrong_target_file_is_an_error_of_the_file(tmp_path, old, new, says):
    assert old in GOOD
    file = _level(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(McplError) as e:
        load_target("user", [tmp_path])
    (d,) = e.value.diagnostics
    assert d.code == "opencl-bad-target" and d.message.startswith(f"{file}: ")
    assert says in d.message, d.message


def test_a_target_file_that_is_not_utf8(tmp_path):
    _level(tmp_path, GOOD.encode() + b"# \xff\n")
    with pytest.raises(McplError, match="byte 0xff is not UTF-8 text"):
        load_target("user", [tmp_path])


def test_gen_says_what_is_wrong_with_the_target_file(run_cli, tmp_path):
    _level(tmp_path, GOOD.replace('main = { qualifier = "__global", fence = '
                                  '"CLK_GLOBAL_MEM_FENCE" }', 'main = "__global"'))
    kernel = tmp_path / "k.mcpl"
    kernel.write_text("module k;\nimport user;\nuser void f(const int n, main float[n] a) {\n"
                      "  foreach (int b in 1 blocks) { foreach (int t in n threads) {\n"
                      "    a[t] = 1.0; } }\n}\n")
    code, out, err = run_cli("gen", "--target", "user", "--hwd-path", tmp_path, kernel,
                             "-o", tmp_path / "out")
    assert code == 1, out + err
    assert "Traceback" not in out + err and "internal error" not in out + err
    assert "[spaces] main must be a table" in err


@pytest.mark.parametrize("target", ["[device\n", b"[device]\nx = '\xff'\n", "[par_group]\n"])
def test_feedback_names_a_target_file_it_cannot_read(tmp_path, target):
    """mcl feedback at a level whose target file is there but cannot be read: the same
    error as mcl gen gives, exit 1; it took such a file for none, and the figures of the
    level's compiler (function costs, measured rates) silently for none."""
    import subprocess
    import sys

    from mcl.hdl.library import BUNDLED
    from tests.conftest import EXAMPLES, child_env
    (tmp_path / "fermi.hdl").write_text((BUNDLED / "fermi.hdl").read_text())
    file = tmp_path / "fermi.target"
    file.write_bytes(target if isinstance(target, bytes) else target.encode())
    run = subprocess.run([sys.executable, "-m", "mcl", "feedback", "--hwd-path", str(tmp_path),
                          str(EXAMPLES / "matmul" / "fermi_v1.mcpl")],
                         capture_output=True, text=True, env=child_env(), timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{file}: " in run.stderr and "[opencl-bad-target]" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def test_a_misspelt_device_key_is_an_error_with_the_key_meant(tmp_path):
    """[device] sustained_bandwith (for sustained_bandwidth) was ignored: the time model
    then left the measured bandwidth out without a word."""
    _level(tmp_path, GOOD + "sustained_bandwith = 4.1e12\n")
    with pytest.raises(McplError) as e:
        load_target("user", [tmp_path])
    (d,) = e.value.diagnostics
    assert "[device] has no key 'sustained_bandwith'" in d.message
    assert "did you mean 'sustained_bandwidth'?" in (d.hint or "")


def test_every_device_key_the_code_reads_is_one_a_target_file_may_have():
    """The keys mcl reads from a target file's [device] table (the generator's and the
    analyses') against mcl.opencl.target.DEVICE_KEYS, so that a key read anew cannot be
    refused as unknown; and every bundled target file loads."""
    import re
    from pathlib import Path

    from mcl.opencl.target import DEVICE_KEYS, read_target_file
    from tests.conftest import ROOT
    patterns = (r'(?:positive_setting|share_range)\(\w+, "(\w+)"',
                r'device_settings\([^()]*(?:\([^()]*\))?[^()]*\)\.get\("(\w+)"',
                r'settings\.get\("(\w+)"', r'\bdev\.get\("(\w+)"', r'_count\(file, dev, "(\w+)"')
    read = set()
    for f in (ROOT / "mcl").rglob("*.py"):
        text = f.read_text()
        for p in patterns:
            read |= set(re.findall(p, text))
    assert "sustained_bandwidth" in read and "local_memory" in read
    assert read <= set(DEVICE_KEYS), sorted(read - set(DEVICE_KEYS))
    for f in sorted(Path(ROOT / "mcl" / "hwdescs").glob("*.target")):
        read_target_file(f)
