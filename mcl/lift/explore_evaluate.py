"""One candidate of an exploration (:mod:`mcl.lift.explore`): its OpenCL generated,
compiled, verified against the interpreter (or a reference) and timed on a device
(:class:`Evaluator`), and the launch its generation has (work-group sizes)."""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mcl.diagnostics import McplError, error
from mcl.lift.codegen import DEFAULT_LOCAL_SIZE, Generated, Options, generate
from mcl.lift.interp import random_inputs, run
from mcl.lift.ir import Program
from mcl.lift.printer import key, show
from mcl.lift.rules import Limits


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
    #: the last generation: (expression, work-group size asked for, Generated or the
    #: McplError of a program that cannot be generated)
    _last: tuple | None = None

    def setup(self):
        if self._inputs is None:
            from mcl.opencl.device import runtime
            self._rt = runtime(self.device)
            try:
                inputs = random_inputs(self.program, self.sizes,
                                       np.random.default_rng(self.seed), low=0.0, high=1.0)
            except MemoryError as e:
                raise self._too_large("the inputs", "do", e) from None
            if self.progress:
                print(f"explore: computing the expected result of '{self.program.name}' at "
                      + ", ".join(f"{k}={v}" for k, v in self.sizes.items())
                      + (" (the reference)" if self.reference else " (Lift's interpreter)"),
                      file=self.progress, flush=True)
            try:
                ref = self.reference(*inputs) if self.reference else \
                    run(self.program, *inputs)
            except MemoryError as e:
                # the interpreter maps in batch: mm at 2048^3 holds its 2^33 products
                raise self._too_large("the expected result", "does", e) from None
            self._inputs, self._expected = inputs, np.asarray(ref, dtype=np.float64)

    def _too_large(self, what: str, verb: str, e: MemoryError) -> McplError:
        return McplError(error(
            "lift-explore", f"{what} of '{self.program.name}' at "
            + ", ".join(f"{k}={v}" for k, v in self.sizes.items())
            + f" {verb} not fit in this machine's memory ({e})",
            hint="explore at smaller sizes (--size): the best implementation found "
                 "there is a good start for these"))

    def limits(self) -> Limits:
        self.setup()
        info = self._rt.info
        # Work-items of a CPU work-group do not run in lock-step: warp-synchronous
        # code (mapWarp/mapLane without barriers) would be wrong there.
        warp = 32 if info.kind == "GPU" else 1
        return Limits(max_work_group=info.max_work_group_size, local_memory=info.local_memory,
                      warp_size=warp)

    def options(self, local_size: int | None = None) -> Options:
        """The generator's options on this device, with work-group size ``local_size``."""
        self.setup()
        info = self._rt.info
        return Options(max_work_group=info.max_work_group_size, local_size=local_size,
                       local_memory=info.local_memory)

    def agrees(self, limits: Limits) -> bool:
        """Whether ``limits`` are this device's (as :meth:`limits` gives them), so that
        a generation with either has the same launch."""
        opts = self.options()
        return (limits.max_work_group, limits.local_memory) == (opts.max_work_group,
                                                                opts.local_memory)

    def generated(self, prog: Program, local_size: int | None = None):
        """The OpenCL of ``prog`` with work-group size ``local_size``: a Generated, or
        the McplError that says why it cannot be generated. The last generation is
        kept: one with the same launch (the search's, to learn the work-group sizes a
        program's launch can use, :class:`mcl.lift.explore.Search`) is the
        candidate's, not generated again."""
        k = key(prog.body)
        if self._last is not None and self._last[0] == k and \
                same_launch(self._last[2], self._last[1], local_size):
            return self._last[2]
        try:
            gen = generate(prog, self.sizes, self.options(local_size))
        except McplError as e:
            gen = e
        self._last = (k, local_size, gen)
        return gen

    def __call__(self, prog: Program, local_size: int | None = None) -> Evaluation:
        from mcl.lift.execute import Bound, compile_generated
        self.setup()
        k, text = key(prog.body), show(prog.body.body)
        gen = self.generated(prog, local_size)
        if isinstance(gen, McplError):
            return Evaluation(k, text, "codegen-error", local_size=local_size,
                              message=gen.diagnostics[0].message)
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


def local_sizes_at(gen: Generated, local_size: int | None) -> tuple[int, ...]:
    """The work-group size along dimension 0 of each kernel of ``gen`` had it been
    generated with work-group size ``local_size`` (None: the generator's default): a
    mapGlb kernel's is the size asked for, or its extent where smaller; a mapWrg
    kernel's is its own whatever the size asked for. Generations of one program at
    sizes where these agree are the same code and launch."""
    asked = local_size or DEFAULT_LOCAL_SIZE
    return tuple(max(1, min(asked, k.extents[0])) if k.extents else k.local_size[0]
                 for k in gen.kernels)


def same_launch(gen: Generated | McplError, asked: int | None, local_size: int | None) -> bool:
    """Whether ``gen``, generated with work-group size ``asked``, is what a generation
    with ``local_size`` gives (a program that cannot be generated: only where the
    sizes are the same)."""
    if (asked or DEFAULT_LOCAL_SIZE) == (local_size or DEFAULT_LOCAL_SIZE):
        return True
    return not isinstance(gen, McplError) and \
        local_sizes_at(gen, asked) == local_sizes_at(gen, local_size)


def usable_sizes(local_sizes: tuple[int, ...], limits: Limits) -> list[int]:
    """The work-group sizes of ``local_sizes`` within the device's limit (the limit
    itself where none is)."""
    return [ls for ls in local_sizes if ls <= limits.max_work_group] or \
        [max(1, min(limits.max_work_group, *local_sizes))]


def offered_sizes(gen: Generated, usable: list[int]) -> tuple[int, ...]:
    """The work-group sizes of ``usable`` as the launch of ``gen``'s program has them
    (any generation of it: its kernels' extents say), once each: sizes beyond the
    widest kernel are the same launch."""
    widest = max(local_sizes_at(gen, max(usable)), default=1)
    return tuple(dict.fromkeys(min(ls, widest) for ls in usable))


def limits_generation(limits: Limits):
    """A generation of a program (sizes bound) with the options ``limits`` allow:
    ``(program, local_size) -> Generated or McplError``."""
    def generated(prog: Program, local_size: int | None):
        try:
            return generate(prog, {}, Options(max_work_group=limits.max_work_group,
                                              local_size=local_size,
                                              local_memory=limits.local_memory))
        except McplError as e:
            return e
    return generated


def work_group_sizes(prog: Program, local_sizes: tuple[int, ...],
                     limits: Limits) -> tuple[int, ...]:
    """The work-group sizes to try for a lowered program of mapGlb kernels (sizes bound):
    those of ``local_sizes`` within the device's limit, each as the launch would have it,
    once each. A kernel whose global size is smaller than a size gets a work-group of its
    global size (a one-work-item kernel: 1), so sizes beyond the widest kernel are one
    candidate, not several timings of the same launch. Empty where the program is not
    generated (it is evaluated once, without a size; its error says why)."""
    usable = usable_sizes(local_sizes, limits)
    gen = limits_generation(limits)(prog, max(usable))
    return () if isinstance(gen, McplError) else offered_sizes(gen, usable)


_COMPILER_ERROR = re.compile(r"^(?:.*?:\d+:\d+:\s*)?error:\s*(?:\S+:\d+:\d+\s*(?:<[^>]*>)?:\s*)?"
                             r"(.+)$", re.MULTILINE)


def first_compiler_error(message: str) -> str:
    """A build failure's message with the compiler's first error on its first line: the
    message says only 'the OpenCL compiler rejected the kernel of P:' there, and the
    summary of a search shows first lines (the log follows, whole)."""
    head, _, log = message.partition("\n")
    m = _COMPILER_ERROR.search(log)
    return f"{head.rstrip(':')}: {m.group(1).strip()}\n{log}" if m else message
