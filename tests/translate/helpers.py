"""Helpers of the translation tests: the example kernels and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcl.hdl import hardware_library
from mcl.mcpl import parse_file

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
GOLDEN = Path(__file__).resolve().parent / "golden"
LEAVES = ("fermi", "hopper", "xeon_phi")
#: the levels whose examples are translated to every leaf below them
SOURCE_LEVELS = ("perfect", "accelerator", "gpu", "nvidia", "mic")


def update_golden() -> bool:
    """Golden files are rewritten only on purpose: MCL_UPDATE_GOLDEN=1."""
    return os.environ.get("MCL_UPDATE_GOLDEN") == "1"


def compare_golden(path: Path, text: str) -> None:
    if update_golden():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    if not path.exists():
        pytest.fail(f"missing golden file {path.relative_to(ROOT)}; "
                    "run with MCL_UPDATE_GOLDEN=1 to create it, then review it")
    expected = path.read_text(encoding="utf-8")
    assert text == expected, (f"translation differs from {path.relative_to(ROOT)} "
                              "(MCL_UPDATE_GOLDEN=1 rewrites it once reviewed)")


def example_cases() -> list[tuple[Path, str, str]]:
    """(file, its level, leaf) for every example at a source level and every leaf
    below that level."""
    lib = hardware_library()
    cases = []
    for f in sorted(EXAMPLES.glob("*/*.mcpl")):
        module = parse_file(f)
        levels = {fn.hardware for fn in module.functions}
        if len(levels) != 1:
            continue
        level = levels.pop()
        if level not in SOURCE_LEVELS:
            continue
        cases += [(f, level, leaf) for leaf in LEAVES if lib.is_descendant(leaf, level)]
    return cases
