"""Property tests: random and mutated HDL text gets diagnostics, never an exception."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcl.diagnostics import Diagnostic
from mcl.hdl import check_text
from mcl.hdl.library import BUNDLED
from tests.hdl.test_validate import VALID

_DIR = Path(tempfile.mkdtemp(prefix="mcl-hdl-prop-"))
TEXTS = [VALID] + [p.read_text() for p in sorted(BUNDLED.glob("*.hdl"))]
TOKENS = ["{", "}", ";", "(", ")", "=", "[*]", ".", ",", "unlimited", "countable", "default",
          "par_group", "par_unit", "memory_space", "memory", "cache", "slots(thread, 1);",
          "nr_units = 4;", "space(main);", "perfect.hierarchy.threads;", "on_chip;", "kB",
          "bit/s", "128B", "(+)", '"log"', "specializes perfect;", "hardware_description x;",
          "0", "-1", "1.5", "/", "*", "x", "device", "connects(a, b[*]);", "op((+), 1);"]


def _check(text: str) -> list[Diagnostic]:
    path = _DIR / "x.hdl"
    hwd, diags = check_text(text, str(path))
    assert all(isinstance(d, Diagnostic) for d in diags)
    if hwd is not None:
        # the model answers its queries on whatever was built
        hwd.par_groups(), hwd.memory_spaces(), hwd.spaces_by_speed(), hwd.peak_flops()
        hwd.lockstep_par_groups(), hwd.feedback_functions(), hwd.device_positions()
    return diags


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_random_text(text):
    diags = _check(text)
    assert diags, "random text is not a valid description"


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TEXTS), st.data())
def test_mutated_descriptions(base, data):
    text = base
    for _ in range(data.draw(st.integers(1, 3))):
        pos = data.draw(st.integers(0, len(text)))
        kind = data.draw(st.sampled_from(["delete", "insert", "token", "swap"]))
        if kind == "delete":
            n = data.draw(st.integers(1, 20))
            text = text[:pos] + text[pos + n:]
        elif kind == "insert":
            text = text[:pos] + data.draw(st.text(max_size=5)) + text[pos:]
        elif kind == "token":
            text = text[:pos] + " " + data.draw(st.sampled_from(TOKENS)) + " " + text[pos:]
        else:
            a = data.draw(st.integers(0, len(text)))
            lo, hi = sorted((pos, a))
            text = text[hi:] + text[lo:hi] + text[:lo]
    for d in _check(text):
        if d.span is not None:
            assert d.span.line >= 1 and d.span.column >= 1
