"""The feedback of a new version compared with the version it refines: where the
predicted time (mcl.analyses.timing) of the new version is longer than that of its
predecessor at the same level and sizes, say so and which part grew.

The predecessor is the one ``mcl versions`` finds for the file among the versions in
its folder (a ``// refines: X.mcpl`` comment, else level order and version numbers);
a predecessor written for a higher level is translated to the new version's level
first, so both are predicted on the same description.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mcl.analyses.values import time_text
from mcl.diagnostics import Diagnostic, McplError, info, warning

#: a new version predicted this much slower (or more) is flagged (the prediction is an
#: estimate: smaller differences are within its error)
SLOWER = 1.05


def _time(diagnostics: list[Diagnostic]) -> dict | None:
    for d in diagnostics:
        if d.code == "feedback-time":
            return d.data
    return None


def against_previous(checked: Any, values: Mapping[str, int] | None = None,
                     search_path: Sequence[str | os.PathLike[str]] = (),
                     resources: Mapping[str, Any] | None = None,
                     specialize: bool = False,
                     computed: list[Diagnostic] | None = None,
                     vendor: Callable[..., Mapping[str, Any]] | None = None
                     ) -> list[Diagnostic]:
    """A warning when ``checked`` is predicted slower than the version it refines
    (``specialize``: ``checked`` is built with its sizes as compile-time constants; the
    version it refines is built as its reference.py says; ``computed``: the feedback of
    ``checked`` with the same values, resources and build, whose predicted time is not
    computed again). ``vendor(checked, level, values, specialize)``: the vendor
    compiler's figures of a version (where ``resources`` are the new version's), so that
    both times rest on the same kind of figures."""
    from mcl.analyses import feedback
    from mcl.analyses.level import feedback_at_level
    from mcl.versions.discover import from_folder
    from mcl.versions.sizes import built_specialised

    file = getattr(checked.module, "file", None)
    if not file or not Path(file).is_file():
        return []
    path = Path(file)
    try:
        vs = from_folder(path.parent, search_path=tuple(str(p) for p in search_path))
    except McplError:
        return []
    me = next((v for v in vs.versions if Path(v.file).resolve() == path.resolve()), None)
    if me is None:
        return []
    # a refines comment that names no version: said (the level order chose the parent)
    said = [dataclasses.replace(d, span=dataclasses.replace(d.span, file=file))
            for d in me.problems if d.code == "versions-unknown-parent" and d.span]
    parent = vs.get(me.parent)
    if parent is None or me.level is None:
        return said
    if not parent.usable:
        fn = checked.module.function(me.function) if me.function else None
        why = ("it has errors" if any(p.is_error for p in parent.problems)
               else "it has no kernel (a function with foreach loops)")
        return said + [info(
            "feedback-previous", f"not compared with {parent.name}, the version this one "
            f"refines: {why}", fn.span if fn is not None else None,
            f"`mcl check {parent.file}` shows what is wrong; --no-previous leaves the "
            "comparison out")]
    # both at the new version's sizes (its parameter defaults, overridden by ``values``)
    from mcl.analyses.kernel import parameter_values, values_of
    fn_new = checked.module.function(me.function) if me.function else None
    values = values_of(checked.module, values)   # not the settings of the kernel's inputs
    if fn_new is not None:
        values = parameter_values(fn_new, values)
    built = built_specialised(parent.file)
    mine = _time(computed) if computed is not None else None
    if mine is None:
        mine = _time(feedback(checked, values=values, only=["time"], resources=resources,
                              specialize=specialize))
    values = values_of(parent.checked.module, values)   # the parent's, at the same sizes
    try:
        level = None if parent.level == me.level else me.level
        theirs_res = vendor(parent.checked, level, values, built) \
            if vendor is not None and resources else None
        if level is None:
            theirs = _time(feedback(parent.checked, values=values, only=["time"],
                                    specialize=built, resources=theirs_res))
        else:
            theirs = _time(feedback_at_level(parent.checked, level, values=values,
                                             only=["time"], search_path=search_path,
                                             specialize=built,
                                             resources=theirs_res).diagnostics)
    except McplError:
        return said
    if not mine or not theirs or mine["seconds"] <= SLOWER * theirs["seconds"]:
        return said
    grew = max(mine["parts"], key=lambda k: mine["parts"][k] - theirs["parts"].get(k, 0.0))
    before = theirs["parts"].get(grew)
    because = (f"its {grew} time grows from {time_text(before)} to "
               f"{time_text(mine['parts'][grew])}" if before else
               f"it is {grew} bound ({time_text(mine['parts'][grew])})")
    fn = checked.module.function(me.function) if me.function else None
    span = fn.span if fn is not None else None
    d = warning("feedback-slower",
                f"this version is predicted slower than {parent.name} "
                f"({time_text(mine['seconds'])} against {time_text(theirs['seconds'])} at "
                f"'{me.level}') because {because}"
                + (f"; '{me.level}' gives no figure for {' or '.join(mine['missing'])}, "
                   "whose traffic the comparison leaves out" if mine.get("missing") else ""),
                span,
                f"compare the two with `mcl versions {path.parent}`; the prediction is an "
                "estimate (see the time feedback)")
    d.data.update(previous=parent.name, seconds=mine["seconds"],
                  previous_seconds=theirs["seconds"], part=grew)
    return said + [d]
