"""The suite's pytest configuration: plugins have nothing to warn about."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.conftest import ROOT


def test_pytest_configures_without_deprecation_warnings():
    """pytest-asyncio (brought by pytest-lsp) warns at start-up while
    asyncio_default_fixture_loop_scope is unset; -W always shows what pytest hides."""
    done = subprocess.run(
        [sys.executable, "-W", "always", "-m", "pytest", "-p", "no:cacheprovider",
         "--collect-only", "-q", "tests/test_diagnostics.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "PytestDeprecationWarning" not in output
    assert "asyncio_default_fixture_loop_scope" not in output
