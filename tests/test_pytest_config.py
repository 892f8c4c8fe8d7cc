"""The suite's pytest configuration: plugins have nothing to warn about."""

from __future__ import annotations

import subprocess
import sys

from tests.conftest import ROOT, child_env


def test_pytest_configures_without_deprecation_warnings():
    """pytest-asyncio (brought by pytest-lsp) warns at start-up while
    asyncio_default_fixture_loop_scope is unset; -W always shows what pytest hides."""
    done = subprocess.run(
        [sys.executable, "-W", "always", "-m", "pytest", "-p", "no:cacheprovider",
         "--collect-only", "-q", "tests/test_diagnostics.py"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
        env=child_env())
    assert done.returncode == 0, done.stdout + done.stderr
    output = done.stdout + done.stderr
    assert "PytestDeprecationWarning" not in output
    assert "asyncio_default_fixture_loop_scope" not in output


def test_test_modules_outside_packages_have_distinct_names():
    """pytest imports a test module of a folder without __init__.py by its bare name:
    two such modules of one name (tests/mcpl/test_bad_input.py and
    tests/skel/test_bad_input.py) stop the whole run at collection."""
    seen: dict[str, str] = {}
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        if (path.parent / "__init__.py").exists():
            continue
        where = str(path.relative_to(ROOT))
        assert path.name not in seen, f"{where} and {seen[path.name]} share a module name"
        seen[path.name] = where


def test_no_test_imports_a_bare_conftest_at_run_time():
    """``from conftest import X`` inside a test runs when the test does, by which time
    ``conftest`` in sys.modules is whichever folder's conftest pytest loaded last
    (tests/skel's for tests/lift's test in the whole run): import shared helpers from
    tests.conftest instead."""
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for n, line in enumerate(path.read_text().splitlines(), 1):
            stripped = line.lstrip()
            if line != stripped and stripped.startswith(("from conftest import",
                                                         "import conftest")):
                found.append(f"{path.relative_to(ROOT)}:{n}")
    assert not found, found
