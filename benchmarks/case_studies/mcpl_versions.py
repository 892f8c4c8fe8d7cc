"""The versions of a case study: the .mcpl files of examples/<kernel>/ on the path from
perfect down to the target, in refinement order, and each compiled for the target
(``mcl.compile``); also the helpers every phase of run.py uses (loading a file as a
module, the short error message a report quotes, the commit measured)."""

from __future__ import annotations

import importlib.util
import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TARGET = "hopper"


# ----------------------------------------------------------------------------- helpers

def load_module(path: Path, name: str):
    """Import a file that is not on the package path (reference.py, gpu_env.py)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def reference_module(kernel: str):
    return load_module(EXAMPLES / kernel / "reference.py", f"reference_{kernel}")


def short_error(e: BaseException, limit: int = 600) -> str:
    """The message a report can quote: the first line and any compiler ``error:``
    lines (a build log is long)."""
    lines = [ln.strip() for ln in f"{type(e).__name__}: {e}".strip().splitlines() if ln.strip()]
    keep = lines[:1] + [ln for ln in lines[1:] if "error" in ln.lower()][:5]
    text = " | ".join(dict.fromkeys(keep))
    return text if len(text) <= limit else text[:limit] + " ..."


_LEVEL_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s+(?:void|int|long|float|double|bool)\b[^;{]*\(",
                       re.MULTILINE)
_VERSION_RE = re.compile(r"^([a-z_]+?)(?:_v(\d+))?$")


def level_of(path: Path) -> str | None:
    """The hardware description a version is written for: the identifier before the
    first function's return type."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", path.read_text(), flags=re.DOTALL)
    m = _LEVEL_RE.search(text)
    return m.group(1) if m else None


def hopper_path() -> list[str]:
    """Levels from the root of the hierarchy down to the target, from the HDL library."""
    try:
        from mcl.hdl import hardware_library
        lib = hardware_library()
        return list(reversed(lib.ancestors(TARGET))) + [TARGET]
    except Exception:  # the library is the source of truth; this is only a fallback
        return ["perfect", "accelerator", "gpu", "nvidia", TARGET]


def versions(kernel: str, extra: list[Path] = (), only: set[str] | None = None) -> list[dict]:
    """The versions of a kernel that can be brought to the target, in refinement order
    (level, then version number; the translated file ``gpu.mcpl`` before ``gpu_v1``);
    ``extra`` adds files from elsewhere (variants being explored), ``only`` keeps the
    named versions (file stems)."""
    path = hopper_path()
    found = []
    for f in sorted((EXAMPLES / kernel).glob("*.mcpl")) + sorted(extra):
        if only is not None and f.stem not in only and f not in extra:
            continue
        level = level_of(f)
        if level not in path:
            continue  # another branch (mic, xeon_phi, fermi): not translatable to hopper
        m = _VERSION_RE.match(f.stem)
        number = int(m.group(2)) if m and m.group(2) else 0
        shown = f.relative_to(ROOT) if f.resolve().is_relative_to(ROOT) else f
        found.append({"version": f.stem, "file": str(shown), "level": level,
                      "order": (path.index(level), number)})
    found.sort(key=lambda v: v["order"])
    for v in found:
        del v["order"]
    return found


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT,
                              capture_output=True, text=True, timeout=10).stdout.strip() or None
    except Exception:
        return None


# ----------------------------------------------------------------------------- compiling

def compile_version(path: Path, device: str | None, specialize: bool = False,
                    fast_math: bool = False):
    """The version as a callable kernel for the target (``mcl.compile`` translates
    higher levels down to it); ``specialize``: sizes as compile-time constants;
    ``fast_math``: relaxed math (mcl run --fast-math). The kernel as mcl gen writes it,
    without the run-time index checks (``check_writes=False``): what is deployed, and
    what the runs before the checks timed; each result is still verified."""
    from mcl.opencl import compile as mcl_compile
    return mcl_compile(str(path), target=TARGET, device=device, specialize=specialize,
                       fast_math=fast_math, check_writes=False)


def runtime_name() -> str:
    return "mcl.compile"

