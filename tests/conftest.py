"""Shared fixtures: paths of the repository, the examples and a CLI runner."""

from __future__ import annotations

import io
import os
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

# mcl.skel's tests run on 1, 2 and 3 devices: PoCL offers three CPU devices when this
# is set before OpenCL starts (collection may start it); other tests use the first.
os.environ.setdefault("POCL_DEVICES", "pthread pthread pthread")

ROOT = Path(__file__).resolve().parent.parent


def error_of(call) -> tuple[str, str]:
    """(code, message) of the first diagnostic of the McplError that ``call()`` raises."""
    from mcl.diagnostics import McplError
    with pytest.raises(McplError) as e:
        call()
    return e.value.diagnostics[0].code, e.value.diagnostics[0].message


def child_env() -> dict[str, str]:
    """The environment for a ``python -m mcl.cli`` child: this checkout first on its
    PYTHONPATH, before what the caller's has (the GPU machine's packages live there)."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    return {**os.environ, "PYTHONPATH": path}
EXAMPLES = ROOT / "examples"


@pytest.fixture
def run_cli():
    """Run ``mcl`` in-process: returns (exit code, stdout, stderr)."""
    from mcl.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = main([str(a) for a in argv])
        return code, out.getvalue(), err.getvalue()

    return run
