"""What the fidelity harness measures: every example version that can be brought
to the hopper level, and a generated sweep of variants of them.

A *case* is MCPL source (an example file, or one with some of its ``const int``
tile, block and work-per-thread sizes changed) plus the sizes it runs at. The
sweep is deterministic: the same examples give the same variants, named by their
recipe (``matmul/hopper_v5[bm=64,tn=4]``), so the recorded vendor figures
(tests/analyses/fidelity/vendor.json) can be matched to the source again on a
machine without a GPU.
"""

from __future__ import annotations

import hashlib
import importlib.util
import itertools
import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
#: the recorded vendor figures (registers, resident blocks, counters, times) per case,
#: which the CPU tests check the analyses against (written by report.py)
RECORD = ROOT / "tests" / "analyses" / "fidelity" / "vendor.json"
#: the level the cases are translated to: hopper (the H100), or what MCL_FIDELITY_LEVEL
#: names below it (h200: the measurements of benchmarks/runs/fidelity_h200.sh)
TARGET = os.environ.get("MCL_FIDELITY_LEVEL", "hopper")
#: the levels on the way to the target, root first (the other branches cannot go there)
PATH = ("perfect", "accelerator", "gpu", "nvidia", "hopper") + \
    ((TARGET,) if TARGET != "hopper" else ())

#: kernels written as a new user would write them, which no figure of the analyses was
#: fitted on (measured with ``measure.py resources --heldout``, compared by heldout.py)
HELDOUT = ROOT / "benchmarks" / "fidelity" / "heldout_kernels"

#: sizes at which counters and times are taken: large enough to fill the H100,
#: small enough that every version (the perfect ones too) runs in milliseconds
FIDELITY_SIZES = {
    "vector_add": {"n": 2 ** 24},
    "matmul": {"n": 2048, "m": 2048, "p": 2048},
    "convolution": {"h": 4096, "w": 4096, "fh": 9, "fw": 9},
    "histogram": {"n": 2 ** 26, "nrBuckets": 256},
    "gesummv": {"n": 4096},
    "black_scholes": {"n": 4_000_000},
    "spmv_csr": {"nrRows": 65536, "nrCols": 131072, "density": 0.001},
    "reduction": {"n": 2 ** 24},
}
#: versions whose contention makes the fidelity size take seconds: smaller sizes
SMALLER = {("reduction", "perfect"): {"n": 2 ** 16}}

_LEVEL_RE = re.compile(r"^\s*([A-Za-z_]\w*)\s+(?:void|int|long|float|double|bool)\b[^;{]*\(",
                       re.MULTILINE)
_VERSION_RE = re.compile(r"^([a-z_]+?)(?:_v(\d+))?$")
_CONST_RE = re.compile(r"(\bconst\s+int\s+)([A-Za-z_]\w*)(\s*=\s*)(\d+)(\s*;)")


@dataclass
class Case:
    name: str                   # kernel/version or kernel/version[k=v,...]
    kernel: str
    version: str
    level: str
    file: str                   # the example it comes from (relative to the root)
    source: str
    sizes: dict = field(default_factory=dict)   # the sizes it runs at (empty: examples')
    overrides: dict = field(default_factory=dict)
    sweep: bool = False
    #: built with its sizes as compile-time constants, as ``mcl run`` and the case
    #: studies build it (reference.py's SPECIALIZE names the version)
    specialize: bool = False

    @property
    def digest(self) -> str:
        text = self.source + ("\n// specialised" if self.specialize else "")
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def level_of(text: str) -> str | None:
    """The hardware description a version is written for."""
    text = re.sub(r"//[^\n]*|/\*.*?\*/", "", text, flags=re.DOTALL)
    m = _LEVEL_RE.search(text)
    return m.group(1) if m else None


def reference_module(kernel: str, folder: Path = EXAMPLES):
    """The reference.py of ``folder / kernel`` (an example's, or a held-out kernel's)."""
    spec = importlib.util.spec_from_file_location(f"reference_{kernel}",
                                                  folder / kernel / "reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _order(path: Path) -> tuple:
    level = level_of(path.read_text())
    m = _VERSION_RE.match(path.stem)
    return (PATH.index(level), int(m.group(2)) if m and m.group(2) else 0, path.stem)


def example_cases(kernels: list[str] | None = None) -> list[Case]:
    """Every version on the way to hopper, in refinement order per kernel."""
    from mcl.versions.sizes import written_for_sizes
    out = []
    for kdir in sorted(p for p in EXAMPLES.iterdir() if (p / "reference.py").exists()):
        if kernels and kdir.name not in kernels:
            continue
        ref = vars(reference_module(kdir.name))
        files = [f for f in kdir.glob("*.mcpl") if level_of(f.read_text()) in PATH]
        for f in sorted(files, key=_order):
            sizes = dict(FIDELITY_SIZES.get(kdir.name, {}))
            sizes.update(SMALLER.get((kdir.name, f.stem), {}))
            out.append(Case(f"{kdir.name}/{f.stem}", kdir.name, f.stem,
                            level_of(f.read_text()), str(f.relative_to(ROOT)),
                            f.read_text(), sizes, specialize=written_for_sizes(f, ref)))
    return out


def consts(source: str) -> dict[str, int]:
    """The ``const int NAME = <literal>;`` declarations of a version."""
    return {m.group(2): int(m.group(4)) for m in _CONST_RE.finditer(source)}


def with_consts(source: str, overrides: dict[str, int]) -> str:
    def sub(m: re.Match) -> str:
        name = m.group(2)
        if name not in overrides:
            return m.group(0)
        return f"{m.group(1)}{name}{m.group(3)}{overrides[name]}{m.group(5)}"
    return _CONST_RE.sub(sub, source)


def _values(v: int) -> list[int]:
    """Other values of a size: quarter, half, double, quadruple (at least 1)."""
    return sorted({x for x in (v // 4, v // 2, v * 2, v * 4) if x >= 1 and x != v})


def sweep_cases(examples: list[Case] | None = None, pairs: bool = True) -> list[Case]:
    """Variants of the example versions written for gpu, nvidia and hopper: each
    ``const int`` size alone at a quarter, half, double and four times its value,
    and (``pairs``) two sizes doubled or halved together. Variants that do not
    check or generate are the measure's business (it records why); variants that the
    feedback finds wrong whatever their speed (mcl.analyses.validity: a loop that never
    runs, a grid of no blocks, a block of more units than it may have, an index beyond
    its dimension, a read of an element nothing writes) are measured too and left out
    by report.py."""
    out: list[Case] = []
    seen: set[str] = set()
    for ex in examples if examples is not None else example_cases():
        if ex.level not in ("gpu", "nvidia", "hopper"):
            continue
        cs = consts(ex.source)
        recipes: list[dict[str, int]] = []
        for name, v in cs.items():
            recipes += [{name: x} for x in _values(v)]
        if pairs:
            for (a, va), (b, vb) in itertools.combinations(cs.items(), 2):
                for fa, fb in ((2, 2), (2, 0.5), (0.5, 2), (0.5, 0.5)):
                    xa, xb = int(va * fa), int(vb * fb)
                    if xa >= 1 and xb >= 1:
                        recipes.append({a: xa, b: xb})
        for r in recipes:
            source = with_consts(ex.source, r)
            digest = hashlib.sha256(source.encode()).hexdigest()
            if digest in seen:
                continue
            seen.add(digest)
            tag = ",".join(f"{k}={v}" for k, v in sorted(r.items()))
            out.append(Case(f"{ex.name}[{tag}]", ex.kernel, ex.version, ex.level, ex.file,
                            source, {}, dict(r), sweep=True, specialize=ex.specialize))
    return out


def heldout_cases() -> list[Case]:
    """The kernels of ``HELDOUT``, a folder each with its reference.py as the examples
    have (``heldout/<kernel>/<version>``), at their parameters' defaults; those written
    for the target's path (the others cannot be brought to it)."""
    from mcl.analyses.kernel import parameter_values
    from mcl.mcpl import check
    out = []
    for f in sorted(HELDOUT.glob("*/*.mcpl")):
        text = f.read_text()
        if level_of(text) in PATH:
            function = check(str(f)).module.functions[-1]
            out.append(Case(f"heldout/{f.parent.name}/{f.stem}", f.parent.name, f.stem,
                            level_of(text), str(f.relative_to(ROOT)), text,
                            parameter_values(function, None)))
    return out


def is_heldout(case: Case) -> bool:
    return case.name.startswith("heldout/")


def reference_of(case: Case):
    """The reference.py a case is verified against."""
    return reference_module(case.kernel, HELDOUT if is_heldout(case) else EXAMPLES)


def all_cases(sweep: bool = True, kernels: list[str] | None = None) -> list[Case]:
    ex = example_cases(kernels)
    return ex + (sweep_cases(ex) if sweep else [])


def at_example_sizes(cases: list[Case], examples: list[Case] | None = None) -> list[Case]:
    """``cases`` with each sweep variant at the sizes of its example version (as the
    timed sweep runs them: a variant's own sizes are its defaults); the others as they
    are."""
    sizes = {c.file: c.sizes for c in (examples if examples is not None else example_cases())}
    return [replace(c, sizes=dict(sizes[c.file])) if c.sweep and c.file in sizes else c
            for c in cases]
