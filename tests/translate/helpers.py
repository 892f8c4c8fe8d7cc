"""Helpers of the translation tests: the example kernels and golden files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcl.hdl import hardware_library
from mcl.mcpl import parse_file
from mcl.opencl.sizing import divisibility_problems

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


def load_reference(example: str):
    """The reference.py module of an example."""
    import importlib.util

    path = EXAMPLES / example / "reference.py"
    spec = importlib.util.spec_from_file_location(f"reference_{example}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def small_sizes(reference, stem: str, limit: int = 4, max_elements: int = 20_000) -> list[dict]:
    """Small sizes of an example's SIZES (those that respect DIVISIBLE_BY for the
    version), at most ``limit`` of them, none with a size product above
    ``max_elements`` (the interpreter is slow)."""
    divisible = getattr(reference, "DIVISIBLE_BY", {}).get(stem, {})
    out = []
    for sizes in reference.SIZES:
        if divisibility_problems(divisible, sizes):
            continue
        ints = [v for v in sizes.values() if isinstance(v, int)]
        product = 1
        for v in ints:
            product *= max(v, 1)
        if product <= max_elements:
            out.append(sizes)
    return out[:limit]
