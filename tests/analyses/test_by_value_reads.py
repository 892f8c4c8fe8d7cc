"""Small arrays in constant memory that a specialised build passes by value
(mcl.analyses.by_value_reads): named with the reads a thread makes of them where the build
reads them through a pointer; silent for a specialised build, for an array too large for
the kernel's arguments, for one read a few times, and at a level without an OpenCL
target."""

from __future__ import annotations

from pathlib import Path

from mcl.analyses import PASSES, feedback
from mcl.mcpl import parse

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _by_value(source_or_path, specialize: bool = False) -> list:
    src = source_or_path
    if isinstance(src, str) and "\n" in src:
        src = parse(src, "k.mcpl")
    return [d for d in feedback(src, only=["by-value"], specialize=specialize)
            if d.code == "feedback-by-value"]


def test_the_filter_read_through_a_pointer_is_named_at_its_parameter():
    path = EXAMPLES / "convolution" / "hopper_v3.mcpl"
    assert "by-value" in PASSES
    (d,) = _by_value(str(path))
    # 4 x 8 outputs a thread, 81 weights each: 2592 reads of 81 elements
    assert d.message.startswith("'filter' (81 elements) is read from constant memory through "
                                "a pointer, 2592 times per thread")
    assert "up to 81 loads per thread" in d.message and "passed by value" in d.message
    assert "--specialize" in d.hint and "SPECIALIZE" in d.hint
    line = next(i for i, text in enumerate(path.read_text().splitlines(), 1)
                if "constant float[fh, fw] filter" in text)
    assert d.span.line == line
    assert d.data["loads"] == 81


def test_no_message_for_the_specialised_build():
    assert _by_value(str(EXAMPLES / "convolution" / "hopper_v3.mcpl"), specialize=True) == []


KERNEL = """module k;
import {level};
{level} void k(const int n = 4096, const int m = {m}, global float[n] out,
              global float[n] x, constant float[m] w) {{
  foreach (int b in n / 256 blocks) {{
    {inner}
      float s = 0.0;
      for (int j = 0; j < {reads}; j++) {{
        s += w[j % m] * x[i];
      }}
      out[i] = s;
    }}{close}
  }}
}}
"""
#: hopper's threads sit in warps; nvidia's straight in blocks
WARPS = "foreach (int v in 8 warps) { foreach (int t in 32 threads) { int i = b * 256 + v * 32 + t;"


def _kernel(m: int, reads: int, level: str = "hopper") -> str:
    if level == "hopper":
        return KERNEL.format(level=level, m=m, reads=reads, inner=WARPS, close="}")
    return KERNEL.format(level=level, m=m, reads=reads,
                         inner="foreach (int t in 256 threads) { int i = b * 256 + t;", close="")


def test_named_for_a_small_array_read_often_enough():
    (d,) = _by_value(_kernel(16, 32))
    assert "'w' (16 elements)" in d.message and "32 times per thread" in d.message
    assert "up to 16 loads per thread" in d.message


def test_silent_for_an_array_too_large_for_the_arguments_or_read_a_few_times():
    assert _by_value(_kernel(512, 512)) == []     # 2 kB > 1024 B
    assert _by_value(_kernel(16, 4)) == []


def test_silent_at_a_level_without_an_opencl_target():
    # nvidia describes the chips below it and has no OpenCL target of its own
    assert _by_value(_kernel(16, 32, "nvidia")) == []
