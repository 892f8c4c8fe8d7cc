"""Exploration (seed 001, "automatic rewriting strategy"): from a high-level
program, apply rules until expressions are fully lowered, pick numeric
parameters within the device's limits, then generate, compile, verify against
the interpreter and time each candidate on an OpenCL device.

Strategies: ``exhaustive`` (every rewrite sequence up to a depth), ``random``
(random walks to lowered expressions) and ``mcts`` (Monte-Carlo tree search:
UCT over rewrites, random walks as roll-outs, reward from the measured time).
Results are memoised by expression and kept in a JSON file, so a search can be
stopped and resumed; kernels that fail to build or give wrong results are
recorded as such and the search goes on."""

from __future__ import annotations

import json
import math
import os
import random
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mcl.diagnostics import McplError, error
from mcl.lift import macros as _macros  # noqa: F401  (registers the macro rules)
from mcl.lift.codegen import Options, check_lowered, generate
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import Program, bind_sizes
from mcl.lift.printer import key, show
from mcl.lift.rules import RULES, Limits, Rewrite, apply_rule, rewrites

#: How strongly random walks prefer each kind of rule (lowering makes progress).
KIND_WEIGHT = {"macro": 6.0, "lowering": 3.0, "fusion": 2.0, "simplification": 2.0,
               "algorithmic": 1.0}


@dataclass
class Evaluation:
    key: str
    expression: str
    status: str                   # ok, wrong, codegen-error, build-error, run-error
    time_s: float | None = None
    #: the work-group size of the candidate's mapGlb kernels (the largest along dimension
    #: 0 of its launch); None where the kernels fix their own (mapWrg)
    local_size: int | None = None
    message: str = ""
    source: str = ""
    #: the launch as the plan has it, one ``{"global": [...], "local": [...]}`` per
    #: kernel; None where no kernel was generated
    launch: list | None = None

    def to_json(self) -> dict:
        return self.__dict__.copy()


@dataclass
class Evaluator:
    """Generates, compiles, verifies and times lowered programs on one device."""

    program: Program                       # the high-level program (sizes bound)
    sizes: dict
    device: str | None = None
    repeat: int = 10
    tolerance: float = 1e-3
    reference: Callable | None = None      # replaces the interpreter for huge sizes
    seed: int = 0
    #: longer kernels (the generator unrolls sequential maps and reductions over
    #: private arrays) are recorded as codegen errors instead of being compiled: a
    #: 2 MB gesummv candidate kept PoCL's compiler busy for minutes
    max_source: int = 256 * 1024
    #: seconds the timed runs of one candidate may take (estimated from its first run)
    max_candidate_s: float = 5.0
    #: where the setup says what it computes (a file, such as sys.stderr), or None
    progress: object = None
    _rt: object = None
    _inputs: list | None = None
    _expected: np.ndarray | None = None

    def setup(self):
        if self._inputs is None:
            from mcl.opencl.device import runtime
            self._rt = runtime(self.device)
            self._inputs = random_inputs(self.program, self.sizes, np.random.default_rng(self.seed),
                                         low=0.0, high=1.0)
            if self.progress:
                print(f"explore: computing the expected result of '{self.program.name}' at "
                      + ", ".join(f"{k}={v}" for k, v in self.sizes.items())
                      + (" (the reference)" if self.reference else " (Lift's interpreter)"),
                      file=self.progress, flush=True)
            try:
                ref = self.reference(*self._inputs) if self.reference else \
                    run(self.program, *self._inputs)
            except MemoryError as e:
                # the interpreter maps in batch: mm at 2048^3 holds its 2^33 products
                raise McplError(error(
                    "lift-explore", f"the expected result of '{self.program.name}' at "
                    + ", ".join(f"{k}={v}" for k, v in self.sizes.items())
                    + f" does not fit in this machine's memory ({e})",
                    hint="explore at smaller sizes (--size): the best implementation found "
                         "there is a good start for these")) from None
            self._expected = np.asarray(ref, dtype=np.float64)

    def limits(self) -> Limits:
        self.setup()
        info = self._rt.info
        # Work-items of a CPU work-group do not run in lock-step: warp-synchronous
        # code (mapWarp/mapLane without barriers) would be wrong there.
        warp = 32 if info.kind == "GPU" else 1
        return Limits(max_work_group=info.max_work_group_size, local_memory=info.local_memory,
                      warp_size=warp)

    def __call__(self, prog: Program, local_size: int | None = None) -> Evaluation:
        from mcl.lift.execute import Bound, compile_generated
        self.setup()
        k, text = key(prog.body), show(prog.body.body)
        info = self._rt.info
        opts = Options(max_work_group=info.max_work_group_size, local_size=local_size,
                       local_memory=info.local_memory)
        try:
            gen = generate(prog, self.sizes, opts)
        except McplError as e:
            return Evaluation(k, text, "codegen-error", local_size=local_size,
                              message=e.diagnostics[0].message)
        # the figures of the launch as the plan has it (a one-work-item kernel has a
        # work-group of 1 whatever size was asked for)
        launch = plan_launch(gen)
        if local_size is not None:
            local_size = widest_local(gen)

        def outcome(status: str, time_s: float | None = None, message: str = "",
                    source: str = gen.source) -> Evaluation:
            return Evaluation(k, text, status, time_s, local_size, message, source, launch)
        if len(gen.source) > self.max_source:
            return outcome("codegen-error", source="",
                           message=f"kernel source too long ({len(gen.source)} characters, "
                                   f"{gen.source.count(chr(10))} lines; limit "
                                   f"{self.max_source}): not compiled")
        try:
            comp = compile_generated(gen, self._rt, prog.name)
        except McplError as e:
            return outcome("build-error",
                           message=first_compiler_error(e.diagnostics[0].message)[:2000])
        try:
            bound = Bound(comp, self._inputs)
            t0 = time.perf_counter()
            bound.run()
            first = time.perf_counter() - t0
            got = bound.result().astype(np.float64)
            exp = self._expected.reshape(got.shape)
            err = float(np.max(np.abs(got - exp))) / max(1.0, float(np.max(np.abs(exp))))
            if not np.isfinite(err) or err > self.tolerance:
                return outcome("wrong", message=f"relative error {err:.3g}")
            # a slow candidate (one thread summing 2^28 elements) is timed fewer times
            reps = max(1, min(self.repeat, int(self.max_candidate_s / first)))
            times = bound.time(reps, warmup=2 if reps == self.repeat else 0)
        except Exception as e:  # noqa: BLE001 - a failing kernel must not stop the search
            return outcome("run-error", message=str(e)[:500])
        return outcome("ok", float(np.median(times)))


def plan_launch(gen) -> list[dict]:
    """The launch of each kernel of a generated program, as its plan has it."""
    return [{"name": k["name"], "global": k["global"], "local": k["local"]}
            for k in gen.plan()["kernels"]]


def widest_local(gen) -> int:
    """The work-group size a mapGlb program's launch has: the largest along dimension 0
    of its kernels (each kernel's is the size asked for, or its extent where smaller)."""
    return max((k.local_size[0] for k in gen.kernels), default=1)


def work_group_sizes(prog: Program, local_sizes: tuple[int, ...],
                     limits: Limits) -> tuple[int, ...]:
    """The work-group sizes to try for a lowered program of mapGlb kernels (sizes bound):
    those of ``local_sizes`` within the device's limit, each as the launch would have it,
    once each. A kernel whose global size is smaller than a size gets a work-group of its
    global size (a one-work-item kernel: 1), so sizes beyond the widest kernel are one
    candidate, not several timings of the same launch. Empty where the program is not
    generated (it is evaluated once, without a size; its error says why)."""
    usable = [ls for ls in local_sizes if ls <= limits.max_work_group] or \
        [max(1, min(limits.max_work_group, *local_sizes))]
    try:
        gen = generate(prog, {}, Options(max_work_group=limits.max_work_group,
                                         local_size=max(usable),
                                         local_memory=limits.local_memory))
    except McplError:
        return ()
    widest = widest_local(gen)
    return tuple(dict.fromkeys(min(ls, widest) for ls in usable))


def launch_text(e: dict, label: bool = False) -> str:
    """The launch of an evaluated candidate as its plan has it: ``global 1024 local
    128`` (dimensions joined by x, kernels by ``; ``), with ``label`` ``global size 1024,
    work-group size 128``; the work-group size alone for results files written before
    launches were recorded; empty where there is none."""
    launch = e.get("launch")
    if launch:
        def dims(xs: list[int]) -> str:
            return "x".join(str(x) for x in xs)
        g, lo = ("global size ", ", work-group size ") if label else ("global ", " local ")
        return "; ".join((f"{k['name']}: " if label and len(launch) > 1 and "name" in k
                          else "") + f"{g}{dims(k['global'])}{lo}{dims(k['local'])}"
                         for k in launch)
    if e.get("local_size"):
        return f"work-group size {e['local_size']}" if label else f"local {e['local_size']}"
    return ""


def is_lowered(prog: Program) -> bool:
    try:
        check_lowered(prog.body.body)
        return True
    except McplError:
        return False


@dataclass
class Results:
    """The resumable results file: every evaluation and the best-so-far curve."""

    path: Path | None
    meta: dict = field(default_factory=dict)
    evaluations: dict[str, dict] = field(default_factory=dict)
    curve: list[list[float]] = field(default_factory=list)
    #: keys of the candidates of the last search, in order (evaluated or recalled)
    searched: list[str] = field(default_factory=list)

    @staticmethod
    def load(path: str | Path | None, meta: dict) -> Results:
        r = Results(Path(path) if path else None, meta)
        if r.path and r.path.exists():
            data = _read_results(r.path)
            old = data.get("meta", {})
            # times are only comparable on one device; the strategy, seed and budget
            # may change between runs (the key is the expression and work-group size)
            _refuse_other_search(r.path, old, meta)
            r.evaluations = data.get("evaluations", {})
            r.curve = data.get("curve", [])
        return r

    def save(self) -> None:
        if self.path:
            tmp = self.path.with_name(self.path.name + ".tmp")
            try:
                tmp.write_text(json.dumps({"meta": self.meta, "evaluations": self.evaluations,
                                           "curve": self.curve, "best": self.best()},
                                          indent=1))
                tmp.replace(self.path)
            except OSError as e:   # named by the path the user gave, not the temporary
                raise OSError(e.errno, e.strerror, str(self.path)) from None

    def candidates(self) -> list[dict]:
        """The evaluations of the candidates of the last search (evaluated or recalled
        from the file), not those of earlier searches kept in the file."""
        return [self.evaluations[k] for k in self.searched]

    def best(self) -> dict | None:
        ok = [e for e in self.evaluations.values() if e["status"] == "ok"]
        return min(ok, key=lambda e: e["time_s"]) if ok else None


def _search_of(meta: dict) -> str:
    sizes = ", ".join(f"{k}={v}" for k, v in meta.get("sizes", {}).items())
    return f"'{meta.get('program')}'" + (f" at {sizes}" if sizes else "") + \
        (f" on {meta['device_name']}" if meta.get("device_name") else "")


def _refuse_other_search(path: Path, old: dict, meta: dict) -> None:
    """A results file resumes the search of one program at its sizes on one device (the
    times compare there only); saving another's would silently replace its results."""
    same = all(old.get(f) == meta.get(f) for f in ("program", "sizes", "source"))
    device = old.get("device_name", meta.get("device_name")) == \
        meta.get("device_name", old.get("device_name"))
    if same and device:
        return
    why = "another device" if same else \
        "another program" if old.get("source") != meta.get("source") else "other sizes"
    raise McplError(error("lift-results", f"results file {path} holds the search of "
                          f"{_search_of(old)}; this one, of {_search_of(meta)}, is of {why} "
                          "and would replace its results",
                          hint="give another --results file, or remove this one to start "
                               "over"))


def _read_results(path: Path) -> dict:
    """The data of a results file; a file that is not one is the user's error."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise McplError(error("lift-results", f"{path} is not a results file of `mcl lift "
                              f"explore` (not JSON: {e})",
                              hint="give another --results file, or remove this one")) from None
    if not isinstance(data, dict) or not isinstance(data.get("evaluations", {}), dict):
        raise McplError(error("lift-results", f"{path} is not a results file of `mcl lift "
                              "explore`", hint="give another --results file, or remove "
                              "this one"))
    return data


def check_results_path(path: str | Path) -> Path:
    """``path`` as a results file that can be written (and read, when it exists); raises
    McplError naming it otherwise. Called before a search, which may take long."""
    p = Path(path)
    folder = p.parent
    if p.is_dir():
        why, hint = "is a folder", f"give a file name, e.g. {p / 'results.json'}"
    elif not folder.is_dir():
        why = f"cannot be written: its folder {folder} does not exist"
        hint = f"create it (mkdir -p {folder}) or give a file in an existing folder"
    elif not os.access(folder, os.W_OK | os.X_OK):
        why, hint = f"cannot be written: no permission to write in {folder}", None
    elif p.exists() and not os.access(p, os.R_OK | os.W_OK):
        why, hint = "exists but cannot be read and written (permissions)", None
    else:
        if p.exists():
            _read_results(p)
        return p
    raise McplError(error("lift-results", f"results file {path} {why}", hint=hint))


#: Outcomes of a candidate, in the order summaries name them.
OUTCOMES = ("ok", "wrong", "codegen-error", "build-error", "run-error")


def outcome_counts(evaluations: list[dict]) -> dict[str, int]:
    """How many candidates had each outcome, in the order of :data:`OUTCOMES`."""
    counts: dict[str, int] = {}
    for e in evaluations:
        counts[e["status"]] = counts.get(e["status"], 0) + 1
    order = {s: i for i, s in enumerate(OUTCOMES)}
    return dict(sorted(counts.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0])))


def summary(evaluations: list[dict]) -> str:
    """``20 candidates: 10 ok, 9 codegen-error, 1 wrong``: every outcome, adding up."""
    counts = outcome_counts(evaluations)
    n = sum(counts.values())
    return f"{n} candidate{'s' if n != 1 else ''}: " + ", ".join(
        f"{v} {k}" for k, v in counts.items())


#: A number standing alone (not part of a name like ``acc_4``) in a message.
_NUMBER = re.compile(r"(?<![\w.])\d+(?:\.\d+)?(?:e[-+]?\d+)?(?![\w])")
_SLOT = "\0"


_COMPILER_ERROR = re.compile(r"^(?:.*?:\d+:\d+:\s*)?error:\s*(?:\S+:\d+:\d+\s*(?:<[^>]*>)?:\s*)?"
                             r"(.+)$", re.MULTILINE)


def first_compiler_error(message: str) -> str:
    """A build failure's message with the compiler's first error on its first line: the
    message says only 'the OpenCL compiler rejected the kernel of P:' there, and the
    summary of a search shows first lines (the log follows, whole)."""
    head, _, log = message.partition("\n")
    m = _COMPILER_ERROR.search(log)
    return f"{head.rstrip(':')}: {m.group(1).strip()}\n{log}" if m else message


def reasons(evaluations: list[dict], width: int = 160) -> list[tuple[str, int, str]]:
    """Why candidates were not kept: (outcome, count, reason) for each outcome other than
    ok and each reason (the first line of the message; messages that differ only in
    their numbers are one reason, whose numbers are given as ranges), most frequent first."""
    groups: dict[tuple[str, str], list[list[str]]] = {}
    for e in evaluations:
        if e["status"] == "ok":
            continue
        line = ((e.get("message") or "").strip() or "no message given").splitlines()[0]
        groups.setdefault((e["status"], _NUMBER.sub(_SLOT, line)), []).append(
            _NUMBER.findall(line))
    out = []
    for (status, template), numbers in groups.items():
        parts = template.split(_SLOT)
        text = parts[0]
        for i, part in enumerate(parts[1:]):
            values = sorted({ns[i] for ns in numbers if i < len(ns)}, key=float)
            text += (values[0] if len(values) == 1 else f"{values[0]} to {values[-1]}") + part
        if len(text) > width:
            text = text[:width - 3] + "..."
        out.append((status, len(numbers), text))
    order = {s: i for i, s in enumerate(OUTCOMES)}
    return sorted(out, key=lambda r: (-r[1], order.get(r[0], len(order)), r[2]))


def listing(evaluations: list[dict], width: int = 100) -> list[str]:
    """One line per candidate (``--verbose``): outcome, time, launch (global and local
    size, as the plan has it), reason and the beginning of its expression."""
    out = []
    launches = [launch_text(e) for e in evaluations]
    column = max([10, *(len(x) for x in launches)])
    for i, (e, ls) in enumerate(zip(evaluations, launches, strict=True), 1):
        t = f"{e['time_s'] * 1e3:.4f} ms" if e.get("time_s") else "-"
        msg = (e.get("message") or "").strip().splitlines()
        expr = e.get("expression", "")
        out.append(f"{i:4} {e['status']:14} {t:>14} {ls:{column}} "
                   + (f"{msg[0][:2 * width]}\n{'':{35 + column}}" if msg else "")
                   + (expr if len(expr) <= width else expr[:width - 3] + "..."))
    return out


class Search:
    """Shared machinery of the strategies: memoised evaluation and progress."""

    def __init__(self, prog: Program, evaluate: Callable[[Program, int | None], Evaluation],
                 results: Results, budget: int, limits: Limits, seed: int = 0,
                 local_sizes: tuple[int, ...] = (64, 128, 256), progress=None,
                 max_depth: int = 12, max_finish: int = 40):
        self.prog = prog
        self.evaluate = evaluate
        self.results = results
        self.budget = budget
        self.limits = limits
        self.rng = random.Random(seed)
        self.local_sizes = local_sizes
        self.progress = progress if progress is not None else sys.stderr
        self.max_depth = max_depth
        self.max_finish = max_finish
        self.tried = 0            # candidates of this search: evaluated now or recalled
        self.evaluated = 0        # of which evaluated in this run
        self.recalled = 0
        self._counted: set[str] = set()   # keys counted towards the budget
        self._shown = 0           # candidates the last progress line showed (a log)
        self.start = time.time()
        self._moves: dict[str, list[Rewrite]] = {}
        self._sizes: dict[str, tuple[int, ...]] = {}

    @property
    def done(self) -> bool:
        return self.tried >= self.budget

    def moves(self, prog: Program) -> list[Rewrite]:
        k = key(prog.body)
        if k not in self._moves:
            self._moves[k] = rewrites(prog, limits=self.limits, explore_only=True)
        return self._moves[k]

    def work_group_sizes(self, prog: Program) -> tuple[int, ...]:
        """The distinct work-group sizes of a lowered program's launch (none where its
        kernels fix their own, mapWrg)."""
        if not _has_glb(prog):
            return ()
        k = key(prog.body)
        if k not in self._sizes:
            self._sizes[k] = work_group_sizes(prog, self.local_sizes, self.limits)
        return self._sizes[k]

    def score(self, prog: Program) -> float | None:
        """Evaluate (or recall) a lowered program; returns its time or None. A program of
        mapGlb kernels is tried with one of the work-group sizes its launch can use
        (:func:`work_group_sizes`): a candidate is an expression and its launch."""
        sizes = self.work_group_sizes(prog)
        ls = self.rng.choice(sizes) if sizes else None
        k = key(prog.body) + (f" @local={ls}" if ls else "")
        if k in self.results.evaluations:
            # a candidate of an earlier (interrupted or shorter) run: it counts towards
            # the budget once, so that resuming with the same budget does no new work;
            # one met again in this search is not a new candidate
            if k not in self._counted and not self.done:
                self._counted.add(k)
                self.tried += 1
                self.recalled += 1
                self.results.searched.append(k)
            e = self.results.evaluations[k]
            return e["time_s"] if e["status"] == "ok" else None
        if self.done:
            return None
        ev = self.evaluate(prog, ls)
        self.tried += 1
        self.evaluated += 1
        self._counted.add(k)
        self.results.evaluations[k] = ev.to_json()
        self.results.searched.append(k)
        best = self.results.best()
        self.results.curve.append([len(self.results.evaluations), best["time_s"] if best
                                   else None, time.time() - self.start])
        self.results.save()
        self._report(ev, best)
        return ev.time_s if ev.status == "ok" else None

    def _interactive(self) -> bool:
        from mcl.cli import is_terminal
        return is_terminal(self.progress)

    def _report(self, ev: Evaluation, best: dict | None) -> None:
        """Progress: on a terminal, a bar redrawn in place; else (a log) a line at every
        tenth of the budget and at its end."""
        if self.progress is False:
            return
        b = f"{best['time_s'] * 1e3:.4f} ms" if best else "-"
        t = f"{ev.time_s * 1e3:.4f} ms" if ev.time_s else ev.status
        if self._interactive():
            width = 30
            filled = int(width * self.tried / max(1, self.budget))
            print(f"\r[{'#' * filled}{'-' * (width - filled)}] {self.tried}/{self.budget} "
                  f"last {t:>14}  best {b}", end="\n" if self.tried >= self.budget else "",
                  file=self.progress, flush=True)
            return
        step = max(1, self.budget // 10)
        if self.tried >= self.budget or self.tried // step > self._shown // step:
            self._line(f"last {t}, best {b}")

    def _line(self, text: str) -> None:
        self._shown = self.tried
        print(f"explore: {self.tried}/{self.budget} candidates; {text}", file=self.progress,
              flush=True)

    def finish(self) -> None:
        """End the progress of a search that stopped before its budget (it ran out of
        candidates): the bar's line on a terminal, the last count in a log."""
        if self.progress is False or not 0 < self.tried < self.budget:
            return
        if self._interactive():
            print(file=self.progress, flush=True)
        elif self._shown != self.tried:
            best = self.results.best()
            self._line("no more candidates; best "
                       + (f"{best['time_s'] * 1e3:.4f} ms" if best else "-"))

    def walk(self, prog: Program) -> Program | None:
        """A random walk from ``prog`` to a lowered program (None: dead end).

        At most ``max_depth`` steps choose among every rewrite; then the walk is
        finished with the rules that only lower what is left (``FINISHING``), so
        that a program with many patterns to lower (gesummv: two maps, two
        reductions, their zips) still ends lowered instead of being dropped
        because the free steps kept splitting and partially reducing."""
        for _ in range(self.max_depth):
            if is_lowered(prog):
                return prog
            moves = self.moves(prog)
            if not moves:
                return None
            weights = [KIND_WEIGHT.get(RULES[m.rule].kind, 1.0) for m in moves]
            prog = self.rng.choices(moves, weights)[0].result
        for _ in range(self.max_finish):
            if is_lowered(prog):
                return prog
            moves = [m for m in self.moves(prog) if _finishing(m.rule)]
            # a sequential map feeding a sequential reduction (directly or through a
            # join) is fused before anything else: otherwise it is lowered to an array
            # as long as its input (a whole matrix row; every window of a convolution),
            # which no register file holds
            moves = [m for m in moves if m.rule in FUSION_RULES] or moves
            if not moves:
                return None
            weights = [KIND_WEIGHT.get(RULES[m.rule].kind, 1.0) for m in moves]
            prog = self.rng.choices(moves, weights)[0].result
        return prog if is_lowered(prog) else None


#: Rules that finish a walk: they lower or simplify and never add patterns that
#: need lowering again without bound (partRed-lower gives a map and a reduce, each
#: lowered by one more step).
FINISHING_KINDS = ("lowering", "simplification")
FINISHING_RULES = ("partRed-to-reduce", "partRed-lower", "map-partRed-lower", "iterate-one",
                   "iterate-decompose", "reorder-to-id", "reduceSeq-mapSeq-fusion",
                   "reduceSeq-join-mapSeq-fusion")
#: Fusions of a sequential map into the sequential reduction it feeds (the reduction
#: then accumulates g's results in a register instead of reading them from an array).
FUSION_RULES = ("reduceSeq-mapSeq-fusion", "reduceSeq-join-mapSeq-fusion")


def _finishing(rule: str) -> bool:
    return RULES[rule].kind in FINISHING_KINDS or rule in FINISHING_RULES


def _has_glb(prog: Program) -> bool:
    from mcl.lift.ir import prims
    names = {p.name for p in prims(prog.body)}
    return "mapGlb" in names and "mapWrg" not in names


#: The rules of the direct lowering, in order of preference: a map whose function
#: computes with one inner map (a 2-D result: matmul, convolution) becomes
#: mapGlb(1, ... mapGlb(0, ...) ...), one work-item per element; other outer maps mapGlb.
#: The fusions come first (FUSION_RULES): a reduction of a joined map of maps (a
#: convolution's window) accumulates in a register rather than in a temporary array.
DIRECT_RULES = FUSION_RULES + ("map-map-to-mapGlb2d", "reduce-sequential", "map-to-mapGlb",
                               "reduce-to-reduceSeq", "map-to-mapSeq")


def direct_lowering(prog: Program, limits: Limits | None = None,
                    max_steps: int = 100) -> Program | None:
    """The program lowered the way a first hand-written kernel would be: the outermost
    map over work-items (mapGlb; for a map of maps with only layout patterns between
    them, mapGlb(1) and mapGlb(0), one work-item per element), everything inside
    sequential, each sequential map that feeds a reduction, directly or through a
    join, fused into it (no array of its results); None where these rules do not
    lower it (a reduction outside every map needs the macro rules; one whose function
    is not associative is folded by one work-item, reduce-sequential). Used as an
    exploration seed: the search then never reports less than the direct kernel."""
    for _ in range(max_steps):
        moves = [m for m in rewrites(prog, limits=limits, explore_only=True)
                 if m.rule in DIRECT_RULES]
        if is_lowered(prog):
            moves = [m for m in moves if m.rule in FUSION_RULES]
            if not moves:
                return prog
        if not moves:
            return None
        prog = min(moves, key=lambda m: (DIRECT_RULES.index(m.rule), len(m.path))).result
    return prog if is_lowered(prog) else None


def macro_seeds(prog: Program, limits: Limits | None = None) -> list[Program]:
    """Lowered programs to evaluate first: the direct lowering, then for every macro
    rule that applies, its first choice (lowered directly where the rule leaves
    something to lower). ``prog`` has its sizes bound."""
    out = []
    direct = direct_lowering(prog, limits)
    if direct is not None:
        out.append(direct)
    for name, r in RULES.items():
        if r.kind != "macro":
            continue
        try:
            p = apply_rule(prog, name, limits=limits)
        except McplError:
            continue
        p = p if is_lowered(p) else direct_lowering(p, limits)
        if p is not None:
            out.append(p)
    return out


def random_search(s: Search) -> None:
    attempts = 0
    while not s.done and attempts < s.budget * 20:
        attempts += 1
        low = s.walk(s.prog)
        if low is not None:
            s.score(low)


def exhaustive(s: Search, depth: int = 3) -> None:
    frontier = [s.prog]
    seen = {key(s.prog.body)}
    for _ in range(depth + 1):
        nxt = []
        for p in frontier:
            if s.done:
                return
            if is_lowered(p):
                s.score(p)
                continue
            for m in s.moves(p):
                k = key(m.result.body)
                if k not in seen:
                    seen.add(k)
                    nxt.append(m.result)
        frontier = nxt


@dataclass
class _Node:
    prog: Program
    parent: _Node | None = None
    children: dict[int, _Node] = field(default_factory=dict)
    visits: int = 0
    reward: float = 0.0


def mcts(s: Search, c: float = 1.4) -> None:
    """UCT: select by upper confidence bound, expand one rewrite, roll out by a
    random walk, back up 1/time relative to the best time seen."""
    root = _Node(s.prog)
    best_time = [math.inf]
    attempts = 0
    while not s.done and attempts < s.budget * 20:
        attempts += 1
        node = root
        while True:
            if is_lowered(node.prog):
                break
            moves = s.moves(node.prog)
            if not moves:
                break
            untried = [i for i in range(len(moves)) if i not in node.children]
            if untried:
                weights = [KIND_WEIGHT.get(RULES[moves[i].rule].kind, 1.0) for i in untried]
                i = s.rng.choices(untried, weights)[0]
                child = _Node(moves[i].result, node)
                node.children[i] = child
                node = child
                break
            node = max(node.children.values(), key=lambda ch: ch.reward / max(1, ch.visits)
                       + c * math.sqrt(math.log(max(1, node.visits)) / max(1, ch.visits)))
        low = s.walk(node.prog)
        t = s.score(low) if low is not None else None
        if t is not None:
            best_time[0] = min(best_time[0], t)
        r = (best_time[0] / t) if t else 0.0
        while node is not None:
            node.visits += 1
            node.reward += r
            node = node.parent


STRATEGIES = {"random": random_search, "exhaustive": exhaustive, "mcts": mcts}

#: Each input array of an exploration at default sizes holds at most this many
#: elements: a search of a few candidates then takes seconds on a 2-core CPU.
DEFAULT_ELEMENTS = 1 << 16


def default_sizes(prog: Program, given: dict) -> dict[str, int]:
    """Values for the size symbols of ``prog``'s parameters that ``given`` lacks: powers
    of two such that each input array holds at most :data:`DEFAULT_ELEMENTS` elements
    (2^16 for a vector, 256 x 256 for a matrix)."""
    from mcl.lift.types import ArrayType, TupleType, free_sizes

    def rank(t) -> int:
        if isinstance(t, ArrayType):
            return 1 + rank(t.elem)
        if isinstance(t, TupleType):
            return max((rank(e) for e in t.elems), default=0)
        return 0

    ranks: dict[str, int] = {}
    for p in prog.params:
        for symbol in free_sizes(p.type):
            ranks[symbol.name] = max(ranks.get(symbol.name, 1), rank(p.type))
    exponent = DEFAULT_ELEMENTS.bit_length() - 1
    return {name: 1 << (exponent // r) for name, r in sorted(ranks.items())
            if name not in given}


def explore(prog: Program, sizes: dict, strategy: str = "mcts", budget: int = 200,
            device: str | None = None, results_path: str | Path | None = None,
            seed: int = 0, depth: int = 3, evaluator: Callable | None = None,
            limits: Limits | None = None, progress=None, reference: Callable | None = None,
            repeat: int = 10, seeds: tuple[Program, ...] = (),
            seed_macros: bool = False) -> Results:
    """Search implementations of ``prog`` at the given sizes; returns the results
    (``results.best()`` is the fastest correct candidate). ``seeds`` are lowered
    programs (derivations expected to be fast) evaluated before the search, within
    its budget, so that a short search is never worse than them; ``seed_macros`` adds
    the direct lowering and the first choice of every macro rule that applies
    (:func:`macro_seeds`)."""
    from mcl.lift.inputs import checked_sizes
    if strategy not in STRATEGIES:
        raise McplError(error("lift-explore", f"unknown strategy '{strategy}'",
                              hint="one of: " + ", ".join(STRATEGIES)))
    for what, value in (("budget", budget), ("depth", depth), ("repeat", repeat)):
        if value < 1:
            raise McplError(error("lift-explore", f"{what} {value}: give 1 or more"))
    sizes = checked_sizes(sizes)
    meta = {"program": prog.name, "sizes": {str(k): int(v) for k, v in sizes.items()},
            "strategy": strategy, "device": device or "default", "source": show(prog.body.body)}
    if results_path and Path(results_path).is_file():   # before the device and reference
        _refuse_other_search(Path(results_path),
                             _read_results(Path(results_path)).get("meta", {}), meta)
    bound = bind_sizes(prog, sizes)
    ev = evaluator or Evaluator(bound, sizes, device, repeat=repeat, reference=reference,
                                seed=seed, progress=sys.stderr if progress is None else progress)
    if limits is None:
        limits = ev.limits() if isinstance(ev, Evaluator) else Limits()
    if seed_macros:
        seeds = (*seeds, *macro_seeds(bound, limits))
    if isinstance(ev, Evaluator) and ev._rt is not None:
        meta["device_name"] = ev._rt.info.spec
    results = Results.load(results_path, meta)
    s = Search(bound, ev, results, budget, limits, seed, progress=progress)
    for p in seeds:
        s.score(bind_sizes(p, sizes))
    if strategy == "exhaustive":
        exhaustive(s, depth)
    else:
        STRATEGIES[strategy](s)
    s.finish()
    results.save()
    return results
