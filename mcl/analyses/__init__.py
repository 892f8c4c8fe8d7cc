"""Performance feedback: the analyses of paper sections 5 and 6.2-6.5 (operation
statistics, transfers, data reuse, faster memories, work per thread, cache
behaviour, feedback functions of descriptions), atomic updates and their
contention, bounds tests in loops, register arrays that only stage copies into
on-chip memory, and a roofline, each a class with
``analyze()`` / ``report()``, combined by :func:`feedback` into diagnostics that
are anchored at the expression, loop or declaration they are about.

Public API::

    feedback(module_or_checked, *, values=None, only=None, library=None) -> [Diagnostic]
    operation_counts(function, checked, values=None) -> OperationCounts
    roofline(function, checked, values, hardware=None) -> Roofline | None
    PASSES                      the pass names `only` accepts
    feedback_function(name)     decorator registering a description's feedback function
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import sympy

import mcl.sympy_integers  # noqa: F401 (sympy's floor of an even size by 6, corrected)
from mcl.analyses import (  # noqa: F401 (they register the feedback functions coalescing, bankConflicts)
    banks,
    by_value_reads,
    coalescing,
    guards,
    races,
    staging,
    validity,
)
from mcl.analyses.atomics import AtomicsAnalysis, bound_by_units
from mcl.analyses.cache import CacheAnalysis
from mcl.analyses.functions import KernelView, feedback_function, lookup
from mcl.analyses.kernel import Kernel, parameter_values
from mcl.analyses.kernel_build import build_kernel
from mcl.analyses.resources import Resources
from mcl.analyses.reuse import ReuseAnalysis, WorkPerThreadAnalysis
from mcl.analyses.stats import (
    OperationCounts,
    Roofline,
    Transfer,
    counts_of_kernel,
    host_link_for,
    roofline,
    roofline_of_kernel,
)
from mcl.analyses.target_settings import share_range, target_file
from mcl.analyses.values import bytes_text, number_text, time_text
from mcl.analyses.window import WindowAnalysis
from mcl.diagnostics import Diagnostic, McplError, article, error, info
from mcl.mcpl import ast

__all__ = [
    "PASSES", "OperationCounts", "Resources", "Roofline", "Transfer", "check_values",
    "feedback", "feedback_function", "function_feedback", "operation_counts", "ranked",
    "roofline",
]

#: Pass names for ``only`` (and ``--only``); "functions" runs every feedback
#: function the description names, the three after it select by their code.
PASSES = ("ops", "transfer", "roofline", "reuse", "faster-memory", "work-per-thread",
          "cache", "atomics", "functions", "occupancy", "coalescing", "bank-conflicts",
          "time", "window", "guards", "staging", "by-value", "races")

#: Codes of the feedback functions that come with another pass than their name's:
#: spills with the occupancy (the registers a thread of a block may have)
_PASS_OF = {"spills": "occupancy"}

#: Most specific first: what the description's own rules say, then proposals
#: for a concrete change at an expression, then observations, then statistics.
_RANK = {
    "feedback-occupancy": 0, "feedback-spills": 0, "feedback-atomics": 1,
    "feedback-coalescing": 1,
    "feedback-bank-conflicts": 2,
    "feedback-faster-memory": 3, "feedback-cache": 4, "feedback-reuse": 5,
    "feedback-work-per-thread": 6, "feedback-window": 6, "feedback-guards": 6,
    "feedback-staging": 6, "feedback-by-value": 6,
    "feedback-needs-value": 7, "feedback-transfer": 8,
    "feedback-roofline": 9, "feedback-time": 9, "feedback-ops": 10, "feedback-function": 11,
}


def operation_counts(function: ast.Function, checked: Any,
                     values: Mapping[str, int] | None = None) -> OperationCounts:
    """Operation statistics of ``function``: symbolic, or with ``values`` (which
    are used as given, without parameter defaults) substituted."""
    k = build_kernel(function, checked, dict(values) if values else None)
    return counts_of_kernel(k)


def feedback(module_or_checked: Any, *, values: Mapping[str, int] | None = None,
             only: Iterable[str] | None = None, library: Any = None,
             resources: Mapping[str, Resources] | None = None,
             specialize: bool = False) -> list[Diagnostic]:
    """All feedback for the functions of a module (an ast.Module, a path or a
    CheckedModule), ranked most specific first.

    ``values``: numbers for parameters, over their defaults. ``only``: pass names
    from :data:`PASSES`. ``library``: an mcl.hdl HardwareLibrary (its search path) or a
    list of directories, used when checking a module that is not yet checked. ``resources``: the
    vendor compiler's figures per function name (registers), used in place of the
    estimates (see mcl.opencl.vendor). ``specialize``: the kernels are built with their
    sizes as compile-time constants (as ``mcl run`` builds a version written for its
    sizes), so loops over sizes are unrolled. Raises McplError when the module has errors,
    ``values`` name a parameter no function has or give one something other than a
    number, a size is negative or a pass is unknown."""
    if values is not None and not isinstance(values, Mapping):
        raise TypeError("mcl.feedback: values maps parameter names to numbers (a dict), not "
                        f"{type(values).__name__}")
    if only is not None and not isinstance(only, str) and (
            not isinstance(only, Iterable) or not all(isinstance(n, str) for n in only)):
        raise TypeError(f"mcl.feedback: only is a pass name or a list of them, not {only!r}")
    if resources is not None and (not isinstance(resources, Mapping) or not all(
            isinstance(r, Resources) for r in resources.values())):
        raise TypeError("mcl.feedback: resources maps function names to "
                        "mcl.analyses.Resources (a dict), not "
                        f"{type(resources).__name__} {resources!r}")
    checked = _checked(module_or_checked, library, "feedback")
    if checked.has_errors:      # no feedback on a module that is not understood
        raise McplError(checked.errors)
    from mcl.analyses.kernel import scalar_parameters
    params = scalar_parameters(checked.module)
    unknown = [name for name in values or {} if name not in params]
    if unknown and checked.module.functions:    # a mistyped name would change nothing
        raise McplError(error(
            "feedback-unknown-value", f"values: no function of {checked.module.name} has a "
            f"parameter '{unknown[0]}'", hint=f"its parameters: {', '.join(params) or 'none'}"))
    check_values(checked.module, values)
    selected = _passes(only)
    out: list[Diagnostic] = []
    for f in checked.module.functions:
        hw = checked.hardware_of(f)
        if hw is None:
            continue
        try:
            out += function_feedback(f, checked, hw, values, selected,
                                     (resources or {}).get(f.name), specialize)
        except RecursionError:
            out.append(info("feedback-imprecise", f"'{f.name}' is too deeply nested for the "
                                                  "analyses", f.span))
    return ranked(out)


def wrong_kernel(module_or_checked: Any, values: Mapping[str, int] | None = None,
                 function: str | None = None, specialize: bool = False) -> list[Diagnostic]:
    """What makes a function wrong whatever its speed at ``values`` (mcl.analyses.validity:
    a loop that never runs, a grid of no blocks, an index beyond its dimension, a read of
    an element nothing writes), alone: ``mcl run`` prints it
    before it runs the kernel. Every function, or the one named ``function``."""
    checked = _checked(module_or_checked, None, "analyses.wrong_kernel")
    if checked.has_errors:
        raise McplError(checked.errors)
    out: list[Diagnostic] = []
    for f in checked.module.functions:
        hw = checked.hardware_of(f)
        if hw is None or (function is not None and f.name != function):
            continue
        try:
            out += validity.report(*_kernels(f, checked, hw, values, specialize))
        except RecursionError:      # too deeply nested for the analyses: nothing to say
            continue
    return ranked(out)


def data_indexed(module_or_checked: Any, function: str | None = None
                 ) -> list[tuple[ast.Index, tuple[int, ...]]]:
    """The array accesses of a function (every function, or the one named ``function``)
    whose element the data choose, so that no analysis at any sizes can say whether it
    stays inside its array, each with the positions of the indices the data choose
    (mcl.analyses.validity.data_indexed): the kernels of ``mcl run`` and ``mcl.compile``
    check those indices as they run (mcl.opencl.index_checks)."""
    checked = _checked(module_or_checked, None, "analyses.data_indexed")
    out: list[tuple[ast.Index, tuple[int, ...]]] = []
    for f in checked.module.functions:
        hw = checked.hardware_of(f)
        if hw is None or (function is not None and f.name != function):
            continue
        try:
            sym = build_kernel(f, checked, None, hw, False)
        except RecursionError:
            continue
        out += [(a.node, positions) for a, positions in validity.data_indexed(sym)]
    return out


def _passes(only: Iterable[str] | str | None) -> set[str]:
    if not only:
        return set(PASSES)
    selected = {only} if isinstance(only, str) else set(only)
    for name in sorted(selected - set(PASSES)):
        raise McplError(error("feedback-unknown-pass", f"unknown pass '{name}'",
                              hint="choose from " + ", ".join(PASSES)))
    return selected


#: Scalar types whose values are whole numbers.
_WHOLE = ("int", "long", "byte")


def check_values(module: ast.Module, values: Mapping[str, int] | None) -> None:
    """Raise McplError where ``values`` give a parameter something other than a
    number, a number its type cannot hold (``n=99999999999`` for an ``int n``, as
    ``--set`` says) or give a parameter that sizes an array a negative value."""
    import numbers

    from mcl.mcpl.check_common import value_range
    for name, value in (values or {}).items():
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise McplError(error(
                "feedback-bad-value", f"values: '{name}' is given {value!r}, not a number",
                hint=f"give {name} a number"))
    for f in module.functions:
        sizes = {n.id for p in f.params for e in p.type.sizes for n in ast.walk(e)
                 if isinstance(n, ast.Name)}
        for p in f.params:
            value = (values or {}).get(p.name)
            if value is not None and not p.type.dims and p.type.name in _WHOLE \
                    and not isinstance(value, numbers.Integral) and not float(value).is_integer():
                raise McplError(error(
                    "feedback-bad-value",
                    f"values: '{p.name}' is {article(p.type.name)} parameter"
                    f" of '{f.name}': it takes a whole number, not "
                    f"{value!r}", p.span, f"give {p.name} a whole number"))
            held = value_range(p.type.name)
            if value is not None and not p.type.dims and held is not None \
                    and not held[0] <= value <= held[1]:
                raise McplError(error(
                    "feedback-bad-value",
                    f"values: '{p.name}' is {article(p.type.name)} parameter"
                    f" of '{f.name}', whose values are {held[2]}: "
                    f"{value!r} does not fit it", p.span,
                    f"give {p.name} a value in that range"))
            if p.name in sizes and value is not None and value < 0:
                raise McplError(error(
                    "feedback-negative-size",
                    f"'{p.name}' sizes arrays of '{f.name}': it cannot be negative, "
                    f"not {value}", p.span, f"give {p.name} a value of 0 or more"))


def ranked(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Feedback without repeats (the same finding reached through two functions),
    most specific first."""
    unique: list[Diagnostic] = []
    seen: set[tuple] = set()
    for d in diagnostics:
        key = (d.code, d.span, d.message)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    unique.sort(key=_rank)
    return unique


def _rank(d: Diagnostic) -> tuple:
    s = d.span
    return (_RANK.get(d.code, 12), -int(d.severity), s.file if s else "",
            s.line if s else 0, s.column if s else 0)


def _checked(what: Any, library: Any, function: str = "feedback") -> Any:
    from mcl.hdl.library import HardwareLibrary, require_paths
    from mcl.mcpl.resolve import CheckedModule, check, require_source

    require_source(what, function, "module_or_checked")
    if isinstance(library, HardwareLibrary):
        search = library.search_path
    elif library is None:
        search = ()
    else:
        require_paths(library, f"mcl.{function}", "library",
                      "directories or an mcl.HardwareLibrary")
        search = library
    if isinstance(what, CheckedModule):
        return what
    return check(what, search)


def _want(selected: set[str], *names: str) -> bool:
    return any(n in selected for n in names)


def _kernels(f: ast.Function, checked: Any, hw: Any, values: Mapping[str, int] | None,
             specialize: bool) -> tuple[Kernel, Kernel]:
    """The symbolic kernel model of ``f`` and the numeric one with ``values`` (the
    symbolic one again where no value is known)."""
    sym = build_kernel(f, checked, None, hw, specialize)
    vals = parameter_values(f, values)
    return sym, (build_kernel(f, checked, vals, hw, specialize) if vals else sym)


def function_feedback(f: ast.Function, checked: Any, hw: Any,
                      values: Mapping[str, int] | None, selected: set[str],
                      resources: Resources | None = None,
                      specialize: bool = False) -> list[Diagnostic]:
    """The diagnostics of the selected passes for one function (``specialize``: built
    with its sizes as compile-time constants)."""
    sym, num = _kernels(f, checked, hw, values, specialize)
    view = KernelView(sym, num, hw, resources=resources)
    out: list[Diagnostic] = []
    missing: set[str] = set()
    if _want(selected, "ops"):
        out += _ops_report(sym, num)
    if _want(selected, "transfer"):
        out += _transfer_report(sym, num)
    if _want(selected, "roofline"):
        out += _roofline_report(view, missing)
    if _want(selected, "reuse", "faster-memory"):
        a = ReuseAnalysis()
        for d in a.report(a.analyze(sym, num), hw):
            if (d.code == "feedback-reuse" and "reuse" in selected) or \
                    (d.code == "feedback-faster-memory" and "faster-memory" in selected):
                out.append(d)
    if _want(selected, "work-per-thread"):
        a = WorkPerThreadAnalysis()
        result = a.analyze(sym, num)
        if result and result.get("needs"):
            # no "units" where a foreach's size is not known statically (stated elsewhere)
            missing |= {s.name for s in sympy.sympify(result.get("units", 0)).free_symbols}
        out += a.report(result, hw)
    if _want(selected, "window"):
        a = WindowAnalysis()
        out += a.report(a.analyze(sym, num), hw)
    if _want(selected, "cache"):
        a = CacheAnalysis()
        out += a.report(a.analyze(sym, num), hw)
    findings = []
    if _want(selected, "atomics", "time"):
        a = AtomicsAnalysis()
        findings = a.analyze(sym, num, view)
        if "atomics" in selected:
            out += a.report(findings, hw)
    if _want(selected, "functions", "occupancy", "coalescing", "bank-conflicts"):
        for name in hw.feedback_functions():
            fn = lookup(name)
            if fn is None:
                out.append(info("feedback-function",
                                f"'{hw.name}' names the feedback function '{name}', which is "
                                "not known to this compiler", f.span,
                                "plug-ins register functions in the entry point group "
                                "'mcl.feedback_functions'"))
                continue
            for d in fn(view):
                code = d.code.removeprefix("feedback-")
                if "functions" in selected or _PASS_OF.get(code, code) in selected:
                    out.append(d)
        missing |= view.missing
    if "time" in selected and num is not sym:
        out += _time_report(view, findings)
    if "guards" in selected:
        out += guards.report(f, num, sym)
    if "staging" in selected:
        out += staging.report(view)
    if "by-value" in selected:
        out += by_value_reads.report(f, num)
    if "races" in selected and num is not sym:
        out += races.report(view)
    out += validity.report(sym, num)
    params = {p.name for p in f.params}
    for name in sorted(missing & params):
        out.append(info("feedback-needs-value",
                        f"some analyses need a value for '{name}'", _param_span(f, name),
                        f"give it an example value: `const int {name} = 2048` in the "
                        f"parameter list, or `--set {name}=2048`"))
    return out


def _and(names: list[str]) -> str:
    """'the a, b and c'."""
    return "the " + (", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1
                     else names[0])


#: the share of the holders that a grid must leave idle for the time message to say so
#: (and to advise more blocks): matmul hopper_v12's 128 blocks on 132 SMs are not worth it
_BUSY_SHARE = 0.9

#: how far above an even spread the busiest holder's execution parts must be for the time
#: message to say that the blocks fall unevenly (matmul hopper_v5's 256 blocks on 132 SMs
#: at 2048^3: 2 on the busiest against 1.94, 3.1%)
_UNEVEN_SHARE = 1.02

#: the share of the arithmetic part from which the time message names the built-in
#: functions that take it
_FUNCTION_SHARE = 0.25


def _data_chosen_note(view: KernelView, findings: list) -> str:
    """What the time message says of the accesses whose elements the data choose: the
    model counts banked ones as elements drawn at random would meet the banks
    (mcl.analyses.bank_data.data_chosen), and data-chosen atomic updates as such
    elements would take the L2's atomic units (mcl.analyses.atomics.unit_queue) or,
    where those do not bound them, each element its share of them."""
    from mcl.analyses.bank_data import data_chosen
    banked = {c.sacc.text: c.passes for c in data_chosen(view)}
    updated = list(dict.fromkeys(f.site.target.text for f in findings
                                 if f.updates is None and f.site.target is not None))
    names = list(dict.fromkeys([*banked, *updated]))
    if not names:
        return ""
    how = [f"{text} takes the banks {p:.1f} times a warp" for text, p in banked.items() if p]
    units = {f.site.target.text: f.queue.operations for f in findings
             if f.updates is None and f.site.target is not None and bound_by_units(f)}
    how += [f"a warp's updates of {text} take {units[text]:.3g} operations of the atomic units"
            if text in units else f"each element of {text} takes an even share of the updates"
            for text in updated]
    return (f"; {_and(names).removeprefix('the ')}, whose elements the data choose, "
            f"{'is' if len(names) == 1 else 'are'} counted as if the data were drawn at "
            f"random" + (f" ({'; '.join(how)})" if how else "")
            + ": data in which a few values are frequent take longer")


#: the share of the predicted time from which the time message says what loading the
#: copies of an unrolled loop together would save
_SERIAL_SHARE = 0.05


def _serial_copies_note(view: KernelView, t) -> str:
    """What the time message says of copies of an unrolled loop that load one at a time
    (mcl.analyses.timing.InFlight.serial), where loading them together would save at
    least :data:`_SERIAL_SHARE` of the time (PredictedTime.serial_saved)."""
    from mcl.analyses.timing_overlap import predicated_body
    if t.serial_saved is None or t.serial_saved < _SERIAL_SHARE * t.seconds:
        return ""
    limit = predicated_body(view)
    loops: dict[int, list] = {}
    for u in t.in_flight.serial:
        loops.setdefault(id(u.loop.node), []).append(u)
    file = target_file(view.hardware)
    notes = []
    for group in loops.values():
        u = group[0]
        names = list(dict.fromkeys(x.load.text for x in group))
        notes.append(
            f"{_and(names).removeprefix('the ')} in the {u.trips} copies of the unrolled loop "
            f"at line {u.loop.node.span.line} {'is' if len(names) == 1 else 'are'} loaded one "
            f"copy at a time, each after the previous copy's work: the guarded body, about "
            f"{u.cost:.0f} multiply-adds, is longer than the compiler predicates "
            f"({file.name if file else 'the target file'}'s predicated_body, {limit:g}), "
            "so each copy is a branch")
    return (f"; {'; '.join(notes)}. Loading every copy's elements into a register array "
            "first (one unrolled loop for the loads, then one for the work) keeps them in "
            f"flight together: about {time_text(t.serial_saved)} less")


def _uneven_note(view, occ, t) -> str:
    """What the time message says where a grid of few rounds ends while its warps
    progress unevenly (mcl.analyses.timing_overlap.uneven_round); "" elsewhere."""
    from mcl.analyses.timing_overlap import uneven_round
    u = uneven_round(view, occ, t)
    if u is None:
        return ""
    file = target_file(view.hardware)
    rounds = ("one round" if u.rounds <= 1 else f"{u.rounds:.2g} rounds")
    return (f"; the grid runs in {rounds} of the resident blocks, each warp going round "
            "its loads of device memory several times, with the issue slots busy (the issue part "
            f"{time_text(u.issue)} of {time_text(u.time)}): there an SM's warps progress "
            "unevenly and the last round ends with the slots of those done idle, measured "
            f"at up to {u.high:g} of a block's life ({u.low:g}-{u.high:g} in "
            f"{file.name if file else 'the target file'}'s uneven_progress_measured), here "
            f"{time_text(u.low * u.life)} to {time_text(u.high * u.life)} beyond the "
            "predicted time, which does not count it: more blocks that each do less "
            "(three rounds or more) keep the slots busy to the end")


def _issued_share(hw) -> tuple[float, float] | None:
    """The target file's ``issued_share_measured``: (least, most) share of their cycles in
    which the schedulers issued, for the compiled kernels the issue part bounds; None
    where the file has no such pair of shares in (0, 1]."""
    share = share_range(hw, "issued_share_measured")
    return share if share is not None and share[0] > 0 else None


def _time_report(view: KernelView, findings: list) -> list[Diagnostic]:
    """The predicted time (mcl.analyses.timing) and what limits it (``findings``: the
    atomic updates of mcl.analyses.atomics)."""
    from mcl.analyses.atomics import end_seconds, queued_seconds
    from mcl.analyses.occupancy import occupancy
    from mcl.analyses.timing import WAITED, device_part, predicted_time

    occ = occupancy(view)
    view.missing.clear()
    t = predicted_time(view, occ, queued_seconds(findings, view, occ),
                       end_seconds(findings, view, occ))
    if t is None:
        return []
    # the parts the barrier waits were added to are shown without them, the waits once
    waits = t.parts.get("barrier waits", 0.0)
    own = {k: (v - waits if k in WAITED else v) for k, v in t.parts.items()}
    others = ", ".join(f"{k} {time_text(v)}" for k, v in sorted(own.items(),
                                                                key=lambda kv: -kv[1])
                       if k != t.limiter and not (k == "barrier waits" and t.limiter in WAITED))
    if waits and t.limiter in WAITED:
        others = (f"{t.limiter} {time_text(own[t.limiter])} plus barrier waits "
                  f"{time_text(waits)}, in which the execution units idle; " + others)
    elif t.overlap is not None:
        # the time is more than the limiter's part: show that too
        others = f"{t.limiter} {time_text(own[t.limiter])}, " + others
    elif waits and any(k in t.parts for k in WAITED):
        others = others.replace(f"barrier waits {time_text(waits)}",
                                f"barrier waits {time_text(waits)} (added to the arithmetic, "
                                "issue, memory instructions and shared memory)")
    # a cold launch: none of the kernel's data in the caches (mcl run --cold times so)
    launch = (f"; {time_text(t.launch)} of it the launch's fixed cost" if t.launch else "")
    head = f"predicted time {time_text(t.seconds)} for a cold launch (mcl run --cold{launch})"
    msg = (f"{head}, {t.limiter} bound (estimated; {others.removesuffix('; ')})" if others
           else f"{head}, {t.limiter} bound (estimated)")
    if t.overlap is not None:
        part, other, together = t.overlap
        file = target_file(view.hardware)
        name = file.name if file else "the target file"
        if part == "issue" and other in WAITED:     # the load-store path's part
            msg += (f"; the issue slots and the {other} part overlap only in part, so "
                    f"together they take {time_text(together)}: a warp whose next "
                    "instruction waits on its read of local memory does not issue "
                    f"({name}'s issue_overlap_exponent)")
        else:
            msg += (f"; the {part} and the {other} part overlap only in part, so "
                    f"together they take {time_text(together)}: warps that wait on their "
                    "loads do not issue"
                    + (", and local memory shares the load-store path with the loads"
                       if part in ("shared memory", "memory instructions") else "")
                    + f" ({name}'s overlap_exponent)")
    if t.missing:
        msg += (f"; '{view.hardware.name}' gives no figure for {' or '.join(t.missing)}, "
                "so the traffic that would take is not counted: where it matters the time "
                "is too short")
    if t.uncounted:
        msg += (f"; {_and(t.uncounted)} {'is' if len(t.uncounted) == 1 else 'are'} not "
                "counted: a loop's trip count is not known at these sizes (feedback-ops "
                "says which), so where they matter the time is too short")
    if t.estimated:
        msg += (f"; the loads {', '.join(t.estimated)}, whose addresses or trip counts "
                "depend on data or on a while loop, are counted as the feedback-requests "
                "estimate says")
    if t.in_flight is not None and t.in_flight.source and "latency" in t.parts:
        msg += (f"; the latency part counts the {t.in_flight.bytes:.0f} B a warp keeps in "
                f"flight in the code of the {t.in_flight.source} (its SASS)")
    msg += _data_chosen_note(view, findings)
    msg += _serial_copies_note(view, t)
    share = _issued_share(view.hardware)
    if t.limiter == "issue" and share is not None:
        low, high = share
        msg += (f"; the issue part counts an instruction a cycle a scheduler, where the "
                f"compiled kernels this bounds issued in {100 * low:.0f}-{100 * high:.0f}% "
                f"of their cycles ({target_file(view.hardware).name}'s issued_share_measured: "
                "their warps wait for loads, at barriers and for dispatch), so the kernel "
                f"may take up to {1 / low:.1f} times the issue part")
    msg += _uneven_note(view, occ, t)
    if t.spills is not None and "memory" in t.parts:
        sp = t.spills
        whose = "the compiler's" if sp.source != "estimated" else "the estimated"
        msg += (f"; the memory part counts the {bytes_text(sp.bytes)} that {whose} spills "
                f"store to local memory ({bytes_text(sp.per_thread)} a thread, stored and "
                f"loaded once in each of the {sp.passes:g} passes of the loops around the "
                "loads) as crossing to device memory: the L2 keeps a part of them, so the "
                "part is an upper bound")
    if t.end_updates is not None and t.end_updates[0] > 0:
        added, total, spread = t.end_updates
        file = target_file(view.hardware)
        msg += (f"; the atomic updates the blocks make at their end ({time_text(total)} in "
                f"all) follow their streams, which end within about {time_text(spread)} of "
                f"each other ({file.name if file else 'the target file'}'s block_end_spread)"
                f": {time_text(added)} of them come after the rest of the kernel")
    if t.idle and t.idle[0] <= _BUSY_SHARE * t.idle[1] and not device_part(t.limiter):
        blocks, holders = t.idle
        msg += (f"; the grid's {blocks} blocks keep {blocks} of the {holders} "
                f"{occ.holder.name}s busy, so the {t.limiter} part is theirs alone: more "
                "blocks (smaller ones, or the work split further) would use the others")
    if t.uneven and t.uneven[2] >= _UNEVEN_SHARE:
        blocks, holders, share = t.uneven
        most = -(-blocks // holders)
        busy, holder = blocks - (most - 1) * holders, occ.holder.name
        msg += (f"; the grid's {blocks} blocks fall {most} to a {holder} on {busy} of the "
                f"{holders} {holder}s and {most - 1} on the others, so the {t.limiter} part is "
                f"the busiest {holder}s' ({(share - 1) * 100:.1f}% above an even spread): a "
                f"number of blocks that {holders} divides, or the last round's work split "
                f"over all {holders} {holder}s, would spread it evenly")
    if t.limiter.endswith(" requests"):
        file = target_file(view.hardware)
        msg += (f"; the {t.limiter.removesuffix(' requests')} serves a request for each line "
                "a warp's load misses in the L1, and a gather's lanes make one each "
                f"({file.name if file else 'the target file'}'s cache_request_rate): fewer "
                "lines a warp (neighbouring lanes at neighbouring elements, or the gathered "
                "array small enough for the L1) take fewer requests")
    if t.limiter == "gathers":
        file = target_file(view.hardware)
        msg += ("; the warps gather (lanes at addresses the data choose), and the requests "
                "the L2 serves for the loads then come after the compulsory traffic rather "
                "than under it: the gathers part is that traffic at the sustained bandwidth "
                "plus the requests at the L2's rate "
                f"({file.name if file else 'the target file'}'s cache_request_rate; a "
                "gather's lanes one each, less what the L1 holds of the gathered array): "
                "fewer gathers that miss the L1 (a gathered array small enough to stay in "
                "it, or indices ordered so that neighbouring lanes share lines) shorten it")
    if t.limiter == "block dispatch":
        msg += ("; the device starts blocks at a rate of its own (the target file's "
                "block_dispatch_rate) and these do less work than starting them takes: "
                "give each block more (more threads, or more elements per thread)")
    taken = sum(t.functions.values())
    if taken and taken >= _FUNCTION_SHARE * t.parts.get("arithmetic", 0.0):
        names = sorted(t.functions, key=lambda n: -t.functions[n])
        what = ", ".join(("divisions" if n == "/" else n) + f" {time_text(t.functions[n])}"
                         for n in names)
        file = target_file(view.hardware)
        costs = file.name if file else "the target file"
        msg += (f"; of the arithmetic, {time_text(taken)} are built-in functions beyond one "
                f"operation each ({what}; their costs with the target's compiler: {costs})")
        relaxed = sum(t.functions_relaxed.values())
        if t.functions_relaxed and relaxed < 0.9 * taken:
            msg += (f", {time_text(relaxed)} with relaxed math (mcl run --fast-math, to the "
                    "precision of the fast instructions)")
    d = info("feedback-time", msg, view.sym.function.span)
    d.data.update(seconds=t.seconds, limiter=t.limiter, parts=t.parts,
                  estimated=t.estimated, functions=t.functions,
                  functions_relaxed=t.functions_relaxed, launch=t.launch, missing=t.missing,
                  overlap=t.overlap,
                  serial_saved=t.serial_saved,
                  in_flight=t.in_flight.bytes if t.in_flight else None,
                  in_flight_source=t.in_flight.source if t.in_flight else None)
    return [d]


def _param_span(f: ast.Function, name: str):
    return next((p.span for p in f.params if p.name == name), f.span)


def _numeric(e: sympy.Expr) -> sympy.Expr | None:
    e = sympy.sympify(e)
    # nan or an infinity (a count divided by an index that can be 0) is no number
    return e if e.is_number and e.is_finite else None


def _ops_report(sym: Kernel, num: Kernel) -> list[Diagnostic]:
    c = counts_of_kernel(sym)
    # totals: a grid-stride loop at its threads' average rounds, as the formula counts
    n = counts_of_kernel(num, mean=True) if num is not sym else c
    approx = "at most " if c.upper_bound else ""

    def both(a: sympy.Expr, b: sympy.Expr) -> str:
        if not sympy.sympify(a).free_symbols:
            return number_text(a)
        nb = _numeric(b)
        return f"{a} (= {number_text(nb)})" if nb is not None else str(a)

    spaces = ", ".join(f"{s}: {both(v, n.accesses.get(s, v))}" for s, v in c.accesses.items()
                       if s not in c.register_spaces)
    # register arrays are no addressable memory: beside the data accesses, not in them
    regs = ", ".join(f"{both(v, n.accesses.get(s, v))} to {s}" for s, v in c.accesses.items()
                     if s in c.register_spaces)
    msg = (f"{approx}{both(c.flops, n.flops)} computational operations, "
           f"{both(c.data_accesses, n.data_accesses)} data accesses"
           + (f" ({spaces})" if spaces else "")
           + (f", besides {regs} (register arrays)" if regs else "")
           + f"; overhead: {both(c.index_ops, n.index_ops)} indexing and "
             f"{both(c.control_ops, n.control_ops)} control-flow operations")
    ai = n.arithmetic_intensity
    if ai is not None and _numeric(ai) is not None:
        # of all the data accesses' bytes (the roofline's intensity is of one space's)
        msg += f"; {float(ai):.3g} operations per byte of the data accesses"
    d = info("feedback-ops", msg, sym.function.span,
             "; ".join(c.reasons) if c.reasons else None)
    d.data.update(flops=str(c.flops), data_accesses=str(c.data_accesses),
                  accesses={s: str(v) for s, v in c.accesses.items()},
                  bytes={s: str(v) for s, v in c.bytes.items()},
                  index_ops=str(c.index_ops), control_ops=str(c.control_ops),
                  approximate=c.approximate, upper_bound=c.upper_bound)
    nf = _numeric(n.flops)
    if nf is not None and nf.is_finite:   # a size of 0 or x / 0 gives nan or zoo
        d.data["flops_value"] = int(nf)
    return [d]


def _transfer_report(sym: Kernel, num: Kernel) -> list[Diagnostic]:
    c = counts_of_kernel(sym)
    if not c.transfers:
        return []
    n = counts_of_kernel(num) if num is not sym else c
    hw = sym.hardware
    out = []
    to_dev = [t for t in c.transfers if t.direction == "to device"]
    to_host = [t for t in c.transfers if t.direction == "to host"]
    total = sympy.expand(c.transfer_bytes)
    ntotal = _numeric(n.transfer_bytes)
    parts = []
    for label, ts in (("to the device", to_dev), ("back to the host", to_host)):
        if ts:
            terms = [f"({t.bytes})" if len(ts) > 1 and isinstance(t.bytes, sympy.Add)
                     else str(t.bytes) for t in ts]
            parts.append(f"{' + '.join(terms)} bytes {label} "
                         f"({', '.join(t.param for t in ts)})")
    msg = f"transfers over the host link: {'; '.join(parts)}; in total {total} bytes"
    link = None
    for t in c.transfers:
        space = sym.checked.space_of(next(p for p in sym.function.params if p.name == t.param))
        link = host_link_for(hw, space) if space else None
        if link is not None:
            break
    data: dict = {"bytes": str(total),
                  "transfers": [{"param": t.param, "direction": t.direction,
                                 "bytes": str(t.bytes)} for t in c.transfers]}
    if ntotal is not None:
        msg += f" (= {bytes_text(float(ntotal))})"
        data["bytes_value"] = int(ntotal)
        bw = link.bandwidth if link is not None else None
        if isinstance(bw, int | float) and bw > 0:
            seconds = float(ntotal) / float(bw)
            # a bandwidth in decimal units, as the descriptions write it (64 GB/s)
            msg += f", {seconds * 1e3:.3g} ms over {link.name} at {bw / 1e9:.4g} GB/s"
            data["seconds"] = seconds
    d = info("feedback-transfer", msg, sym.function.span,
             "keep data on the device between kernels where you can")
    d.data.update(data)
    out.append(d)
    return out


#: how much more the built-in functions must weigh at their cost than at one operation
#: each for the roofline to say so
_WEIGHED_MATTERS = 0.1


def _weighed_functions(view: KernelView, r) -> str | None:
    """The roofline again with the built-in functions and divisions at what they cost
    with the target's compiler (its ``function_costs``, as the time feedback weighs
    them: a log about 26 multiply-adds with NVIDIA's precise math), where the target
    file gives costs and they add at least a tenth to the operations; None otherwise."""
    from mcl.analyses.timing_counts import function_extra
    extra, _ = function_extra(view)
    # a multiply-add is two operations of the peak rate
    flops = r.flops + 2 * sum(extra.values())
    if flops < (1 + _WEIGHED_MATTERS) * r.flops:
        return None     # a division or two beside many operations: the figure stands
    intensity = flops / r.bytes if r.bytes else float("inf")
    attainable = min(r.peak_flops, intensity * r.bandwidth)
    bound = "compute" if intensity * r.bandwidth >= r.peak_flops else "bandwidth"
    names = ", ".join(sorted("divisions" if n == "/" else n for n in extra))
    most = "at most " if r.upper_bound else ""
    return (f"; with the built-in functions at their cost with the target's compiler "
            f"({names}: {target_file(view.hardware).name}'s function_costs), {most}"
            f"{flops / 1e9:.3g} GFLOP ({intensity:.3g} operations per byte): {bound}-bound, "
            f"attainable {attainable / 1e9:.3g} GFLOP/s")


def _roofline_report(view: KernelView, missing: set[str]) -> list[Diagnostic]:
    num = view.num
    hw = num.hardware
    if hw.peak_flops() is None:
        return []
    r = roofline_of_kernel(num)
    if r is None:
        c = counts_of_kernel(num)
        missing |= {s.name for s in sympy.sympify(c.flops).free_symbols}
        return []
    most = "at most " if r.upper_bound else ""
    msg = (f"roofline on '{hw.name}': {most}{r.flops / 1e9:.3g} GFLOP and "
           f"{r.bytes / 1e9:.3g} GB from {r.space} ({r.intensity:.3g} operations per byte): "
           f"{r.bound}-bound, attainable {r.attainable / 1e9:.3g} GFLOP/s of "
           f"{r.peak_flops / 1e9:.4g} peak ({r.bandwidth / 1e9:.4g} GB/s)")
    hint = "stop optimising when measured performance is close to the attainable figure"
    if r.best_attainable > r.attainable * 1.01:
        msg += (f"; if each element crossed the memory interface once "
                f"({r.best_intensity:.3g} operations per byte): {r.best_bound}-bound, "
                f"{r.best_attainable / 1e9:.3g} GFLOP/s")
        # the accesses that repeat an element may be served by a cache: the first
        # figure is what the kernel reaches where none is, not a ceiling
        if hw.caches_for(r.space):
            hint = (f"the first figure counts every access to {r.space} at its bandwidth; "
                    "the caches serve repeated ones, so a kernel can run faster: the second "
                    "figure is the ceiling")
    weighed = _weighed_functions(view, r)
    if weighed is not None:
        msg += weighed
    if r.upper_bound:
        hint += ("; the operations are counted where conditions let them run or not (see "
                 "feedback-ops), so the figures are upper bounds")
    d = info("feedback-roofline", msg, num.function.span, hint)
    d.data.update(flops=r.flops, bytes=r.bytes, peak_flops=r.peak_flops,
                  bandwidth=r.bandwidth, intensity=r.intensity,
                  best_intensity=r.best_intensity, attainable=r.attainable,
                  best_attainable=r.best_attainable, bound=r.bound, best_bound=r.best_bound)
    return [d]
