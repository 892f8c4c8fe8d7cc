"""Exploration (seed 001, "automatic rewriting strategy"): from a high-level
program, apply rules until expressions are fully lowered, pick numeric
parameters within the device's limits, then generate, compile, verify against
the interpreter and time each candidate on an OpenCL device.

Strategies: ``exhaustive`` (every rewrite sequence up to a depth), ``random``
(random walks to lowered expressions) and ``mcts`` (Monte-Carlo tree search:
UCT over rewrites, random walks as roll-outs, reward from the measured time).
Results are memoised by expression and kept in a JSON file, so a search can be
stopped and resumed; kernels that fail to build or give wrong results are
recorded as such and the search goes on.

This module is the search; one candidate's evaluation is
:mod:`mcl.lift.explore_evaluate`, the results file and the summaries
:mod:`mcl.lift.explore_results` (their names are importable from here too)."""

from __future__ import annotations

import math
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from mcl.diagnostics import McplError, error
from mcl.lift import macros as _macros  # noqa: F401  (registers the macro rules)
from mcl.lift.codegen import check_lowered
from mcl.lift.explore_evaluate import (  # noqa: F401  (the evaluation of one candidate)
    Evaluation,
    Evaluator,
    first_compiler_error,
    limits_generation,
    offered_sizes,
    plan_launch,
    usable_sizes,
    widest_local,
    work_group_sizes,
)
from mcl.lift.explore_results import (  # noqa: F401  (the results and their summaries)
    OUTCOMES,
    ExploreInterrupted,
    Results,
    _read_results,
    _refuse_other_search,
    check_results_path,
    launch_text,
    listing,
    outcome_counts,
    reasons,
    summary,
)
from mcl.lift.ir import Program, bind_sizes
from mcl.lift.printer import key, show
from mcl.lift.rules import RULES, Limits, Rewrite, apply_rule, rewrites
from mcl.lift.typecheck import check_program

#: How strongly random walks prefer each kind of rule (lowering makes progress).
KIND_WEIGHT = {"macro": 6.0, "lowering": 3.0, "fusion": 2.0, "simplification": 2.0,
               "algorithmic": 1.0}


def is_lowered(prog: Program) -> bool:
    try:
        check_lowered(prog.body.body)
        return True
    except McplError:
        return False


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
        # a program's launch is learnt from a generation of it: the evaluator's, where
        # it generates with these limits (that generation is then the candidate's)
        generated = getattr(evaluate, "generated", None)
        agrees = getattr(evaluate, "agrees", None)
        self.generate = generated if generated is not None and agrees is not None and \
            agrees(limits) else limits_generation(limits)

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
            self._sizes[k] = self._offered(prog)
        return self._sizes[k]

    def _offered(self, prog: Program) -> tuple[int, ...]:
        """:func:`work_group_sizes` of ``prog``, from one generation of it: at the size
        :meth:`score` is about to draw where each usable size is a launch of its own
        (arrays at least as wide as the sizes), so that the evaluator's generation of
        the candidate is that one. The draw is made again by :meth:`score`, from the
        same state of the random choices."""
        usable = usable_sizes(self.local_sizes, self.limits)
        state = self.rng.getstate()
        guess = self.rng.choice(usable)
        self.rng.setstate(state)
        gen = self.generate(prog, guess)
        if isinstance(gen, McplError) and guess != max(usable):
            # the sizes are those of a generation at the widest size
            gen = self.generate(prog, max(usable))
        return () if isinstance(gen, McplError) else offered_sizes(gen, usable)

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

    def interrupted(self) -> None:
        """End the progress of a search stopped by Ctrl-C: the bar's line on a terminal
        (what follows starts on a line of its own)."""
        if self.progress is not False and self.tried and self._interactive():
            print(file=self.progress, flush=True)

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


def _refuse_huge_inputs(prog: Program) -> None:
    """An input array of more elements than the generated kernels index (32-bit
    integers) is refused before its random values are made: no candidate could run."""
    from mcl.lift.codegen import _MAX_ELEMENTS, _numpy_shape
    for p in prog.params:
        n = math.prod(_numpy_shape(p.type))
        if n > _MAX_ELEMENTS:
            raise McplError(error(
                "lift-size", f"'{p.name}' holds {n:,} elements at these sizes; the generated "
                f"kernels index with 32-bit integers, up to {_MAX_ELEMENTS:,}", p.span,
                hint="choose smaller sizes"))


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
    (:func:`macro_seeds`).

    Ctrl-C (KeyboardInterrupt) stops the search with :class:`ExploreInterrupted`, a
    KeyboardInterrupt whose ``results`` are the candidates evaluated so far (saved to
    ``results_path``, from which the same call resumes)."""
    from mcl.lift.arguments import (
        LiftArgumentError,
        int_argument,
        path_argument,
        program_argument,
        sizes_argument,
        sizes_of_program,
    )
    prog = program_argument(prog, "explore", "program")
    sizes = sizes_argument(sizes, "explore")
    # before anything is generated or evaluated: a size name the program does not use
    # (a typo, 'n' for 'N') was carried through a whole search
    sizes_of_program(sizes, prog, "explore")
    if not isinstance(strategy, str):
        raise LiftArgumentError("explore", "strategy", "is the name of a strategy ("
                                + ", ".join(STRATEGIES) + f"), not {type(strategy).__name__}")
    for what, value in (("budget", budget), ("depth", depth), ("repeat", repeat)):
        int_argument(value, "explore", what)
    int_argument(seed, "explore", "seed", "0 or more")
    path_argument(results_path, "explore", "results_path", optional=True)
    if strategy not in STRATEGIES:
        raise McplError(error("lift-explore", f"unknown strategy '{strategy}'",
                              hint="one of: " + ", ".join(STRATEGIES)))
    for what, value in (("budget", budget), ("depth", depth), ("repeat", repeat)):
        if value < 1:
            raise McplError(error("lift-explore", f"{what} {value}: give 1 or more"))
    if seed < 0:    # numpy's generators take none
        raise McplError(error("lift-explore", f"seed {seed}: give 0 or more"))
    _refuse_huge_inputs(bind_sizes(prog, sizes))
    # as the commands do: a split its size does not divide is said at the split, and a
    # results file that cannot be written before the search, not at its first save
    check_program(bind_sizes(prog, sizes))
    if results_path is not None:
        check_results_path(results_path)
    meta = {"program": prog.name, "sizes": {str(k): int(v) for k, v in sizes.items()},
            "strategy": strategy, "device": device or "default", "source": show(prog.body.body)}
    if results_path and Path(results_path).is_file():   # before the device and reference
        _refuse_other_search(Path(results_path),
                             _read_results(Path(results_path)).get("meta", {}), meta)
    bound = bind_sizes(prog, sizes)
    try:
        ev = evaluator or Evaluator(bound, sizes, device, repeat=repeat, reference=reference,
                                    seed=seed,
                                    progress=sys.stderr if progress is None else progress)
        if limits is None:
            limits = ev.limits() if isinstance(ev, Evaluator) else Limits()
        if seed_macros:
            seeds = (*seeds, *macro_seeds(bound, limits))
        if isinstance(ev, Evaluator) and ev._rt is not None:
            meta["device_name"] = ev._rt.info.spec
    except KeyboardInterrupt:
        # Ctrl-C while the expected result is computed: nothing was evaluated (a
        # results file is left as it was)
        raise ExploreInterrupted(Results(None, meta), 0, budget) from None
    results = Results.load(results_path, meta)
    s = Search(bound, ev, results, budget, limits, seed, progress=progress)
    try:
        for p in seeds:
            s.score(bind_sizes(p, sizes))
        if strategy == "exhaustive":
            exhaustive(s, depth)
        else:
            STRATEGIES[strategy](s)
    except KeyboardInterrupt:
        # Ctrl-C: keep what was found (every evaluation is saved as it ends; this
        # saves one interrupted between its record and its save) and say so
        s.interrupted()
        results.save()
        raise ExploreInterrupted(results, s.tried, budget) from None
    s.finish()
    results.save()
    return results
