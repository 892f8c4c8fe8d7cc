"""Choosing the problem size to time a kernel at within a time limit.

A running OpenCL kernel cannot be interrupted: the perfect reduction (2^28 float
atomics on one address) would hold an H100 for hours. Drivers that time many
versions of a kernel (the case studies, the MCPL-Lift comparison) therefore time
each one on a ladder of smaller sizes first and never start a run predicted to
exceed their limit: :func:`scaled_sizes` names the sizes that grow with the problem,
:func:`size_ladder` makes the ladder, :func:`fit_size` walks it, :func:`work_of` gives
the work a size does (to extrapolate times between sizes)."""

from __future__ import annotations

import ast
from collections.abc import Callable

import numpy as np

from mcl.opencl.plan import evaluate


def divisibility_problems(need: dict, sizes: dict) -> list[str]:
    """The demands of a version's ``DIVISIBLE_BY`` (reference.py) that ``sizes`` break,
    each as "KEY a multiple of D". A key is a size parameter ("w") or a sum or product
    of them and integers ("w + fw - 1": the length of the input's rows, which 128-bit
    loads of whole runs need to be a multiple of 4); a demand on a size that ``sizes``
    does not give is not checked."""
    wrong = []
    for key, d in need.items():
        value = size_expression(str(key), sizes)
        if value is not None and value % int(d):
            wrong.append(f"{key} a multiple of {d}")
    return wrong


#: what a DIVISIBLE_BY key may be made of: sizes, integers, +, - and *
_KEY_NODES = (ast.Expression, ast.BinOp, ast.Add, ast.Sub, ast.Mult, ast.Name, ast.Load,
              ast.Constant)


def size_expression(text: str, sizes: dict) -> int | None:
    """The value of a ``DIVISIBLE_BY`` key: ``text`` (a size name or +, -, * of names
    and integers) at ``sizes``, through the launch plan's evaluator; None where it
    names a size ``sizes`` does not give."""
    tree = ast.parse(text, mode="eval")
    if not all(isinstance(n, _KEY_NODES) for n in ast.walk(tree)) or any(
            isinstance(n, ast.Constant) and not isinstance(n.value, int)
            for n in ast.walk(tree)):
        raise ValueError(f"DIVISIBLE_BY key '{text}' is not a size or a sum or product of "
                         "sizes and integers")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    env = {k: int(sizes[k]) for k in names if isinstance(sizes.get(k), int | np.integer)}
    return evaluate(text, env) if len(env) == len(names) else None


def scaled_sizes(ref, sizes: dict) -> tuple[str, ...]:
    """The size parameters of ``sizes`` that grow with the problem, which the ladder
    halves together: reference.py's ``SCALE`` (convolution's ``("h", "w")``: its filter
    stays 9 x 9), else ``n`` where the sizes have it, else every integer size."""
    keys = getattr(ref, "SCALE", None) or (("n",) if "n" in sizes else tuple(sizes))
    return tuple(k for k in keys if isinstance(sizes.get(k), int | np.integer))


def size_ladder(sizes: dict, keys: tuple[str, ...], need: dict | None = None,
                fraction: float = 1 / 256) -> list[dict]:
    """Smaller sizes than ``sizes``, ascending, then ``sizes`` itself: the size
    parameters ``keys`` halved together j times (j from the first that brings their
    product to ``fraction`` or below, down to 1), rounded down to multiples of
    the version's divisors ``need`` (DIVISIBLE_BY)."""
    need = need or {}
    keys = tuple(k for k in keys if isinstance(sizes.get(k), int | np.integer))
    if not keys:
        return [dict(sizes)]
    top = max(1, int(np.ceil(np.log2(1 / fraction) / len(keys))))
    out: list[dict] = []
    for j in range(top, 0, -1):
        s = dict(sizes)
        for k in keys:
            d = max(1, int(need.get(k, 1)))
            s[k] = max(d, int(sizes[k]) // 2 ** j // d * d)
        if s != sizes and (not out or s != out[-1]):
            out.append(s)
    return out + [dict(sizes)]


def fit_size(measure: Callable[[int], float], work: Callable[[int], float], rungs: int,
             limit_s: float, headroom: float = 4.0, max_step: float | None = None) -> dict:
    """Which rung of a ladder of sizes (ascending; the last is the paper size) to
    measure a version at, without ever starting a run predicted to exceed
    ``limit_s``. ``measure(i)``: seconds of one run at rung i; ``work(i)``: its work.
    From rung 0 up, the time per unit of work of the largest rung measured predicts
    the paper size; where that prediction exceeds ``limit_s``, the largest rung
    predicted within ``limit_s / headroom`` is measured next (a closer prediction),
    until no larger rung fits. ``max_step`` bounds each step to that factor of work
    (the paper size included): time per unit of work is not constant for every
    kernel (float atomics on one address cost 50 times more per element at 2^20
    elements than at 2^12, from contention), and small steps keep a wrong
    prediction small. Returns ``{"rung", "predicted_s", "probes"}``:
    ``predicted_s`` is one run at the paper size, ``probes`` the (rung, seconds) runs."""
    last = rungs - 1
    if last <= 0:
        return {"rung": 0, "predicted_s": None, "probes": []}
    i, probes = 0, []
    while True:
        t = measure(i)
        probes.append((i, t))
        rate = t / work(i)
        predicted = rate * work(last)
        reach = [k for k in range(i + 1, rungs)
                 if max_step is None or work(k) <= max_step * work(i)]
        if predicted <= limit_s and last in reach:
            return {"rung": last, "predicted_s": predicted, "probes": probes}
        cap = limit_s if predicted <= limit_s else limit_s / headroom
        larger = [k for k in reach if k < last and rate * work(k) <= cap]
        if not larger:
            return {"rung": i, "predicted_s": predicted, "probes": probes}
        i = larger[-1]


def work_of(ref, args: dict, metric: str) -> float:
    """The work a run does, for extrapolating times across sizes: the figure of merit's
    flops or bytes of reference.py, else the product of the integer sizes."""
    names = ("flops", "bytes_moved") if metric == "GFLOP/s" else ("bytes_moved", "flops")
    for name in names:
        f = getattr(ref, name, None)
        if f is not None:
            w = float(f(**args))
            if w > 0:
                return w
    return float(np.prod([float(v) for v in args.values()
                          if isinstance(v, int | np.integer) and v > 0] or [1.0]))
