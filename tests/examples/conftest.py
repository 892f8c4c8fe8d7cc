"""What the example tests share: the benchmark scripts they test, loaded once each by
their file (the case studies' module names, ``report`` among them, are taken by other
benchmark folders)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "benchmarks" / "case_studies"


def load_script(path: Path, key: str) -> ModuleType:
    """The module of the script at ``path``, under the name ``key``, loaded once."""
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]


def load_case_study(name: str) -> ModuleType:
    """benchmarks/case_studies/<name>.py (its folder on the path, as run.py imports its
    neighbours)."""
    if str(CASES) not in sys.path:
        sys.path.insert(0, str(CASES))
    return load_script(CASES / f"{name}.py", f"case_studies_{name}")
