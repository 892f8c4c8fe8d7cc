"""Helpers for HDL tests: check a description text against the bundled library."""

from __future__ import annotations

import pytest

from mcl.hdl import check_text


@pytest.fixture
def check(tmp_path):
    """check(text, name='user') -> (model or None, diagnostics); the text is a file
    ``<name>.hdl`` in a temporary directory."""

    def run(text: str, name: str = "user"):
        path = tmp_path / f"{name}.hdl"
        path.write_text(text)
        return check_text(text, str(path))

    return run


def codes(diags) -> list[str]:
    return [d.code for d in diags if d.is_error]
