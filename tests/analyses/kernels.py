"""Small MCPL kernels written by a test, built as the analyses see them."""

from __future__ import annotations

import textwrap

from mcl.analyses.kernel import parameter_values
from mcl.analyses.kernel_build import build_kernel
from mcl.mcpl import check


def built(tmp_path, source: str, values: dict | None = None, specialized: bool = False,
          allow: tuple[str, ...] = ()):
    """(symbolic kernel, kernel with the sizes' values, hardware) of the last function
    of ``source`` (an MCPL module, dedented), written to ``tmp_path`` (``specialized``:
    built with its sizes as compile-time constants; ``allow``: codes of errors of mcl
    check that the test builds the kernel despite, to test an analysis on it)."""
    path = tmp_path / "k.mcpl"
    path.write_text(textwrap.dedent(source))
    checked = check(str(path))
    errors = [d for d in checked.errors if d.code not in allow]
    assert not errors, [d.message for d in errors]
    f = checked.module.functions[-1]
    hw = checked.hardware_of(f)
    return (build_kernel(f, checked, None, hw, specialized),
            build_kernel(f, checked, parameter_values(f, values or {}), hw, specialized), hw)
