"""Feedback at another level (``mcl feedback --level LEVEL``): the module is
translated down to LEVEL, printed, and the printed text is checked and analysed,
so every location of the feedback is a line of that text, which is no file: it is
named ``<file>@<level>`` and returned with the diagnostics for showing them."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from mcl.diagnostics import Diagnostic, McplError, Related, info


@dataclass
class LevelFeedback:
    """The feedback a translated version of a module gets.

    ``file``: the name its diagnostics use for the translated text (``<file>@<level>``,
    in the original's directory so that its imports resolve); ``text``: that text
    (what ``mcl translate --to LEVEL`` prints); ``diagnostics``: a first note at the
    original function(s) saying so, then the feedback (or the translation's errors,
    at the original)."""
    file: str
    text: str
    diagnostics: list[Diagnostic] = field(default_factory=list)


def translated_name(file: str, level: str) -> str:
    return f"{file}@{level}"


def feedback_at_level(checked: Any, level: str, *, values: Mapping[str, int] | None = None,
                      only: Iterable[str] | None = None,
                      search_path: Sequence[str | os.PathLike[str]] = (),
                      resources: Mapping[str, Any] | None = None,
                      specialize: bool = False) -> LevelFeedback:
    """Translate ``checked`` (a CheckedModule without errors) to ``level`` and give the
    feedback of the translated text. A translation the module does not allow (no
    path, unknown level) comes back as its error diagnostics, at the original."""
    from mcl.analyses import feedback
    from mcl.mcpl import parse, print_module
    from mcl.mcpl.resolve import check
    from mcl.translate import translate

    module = checked.module
    name = translated_name(module.file, level)
    try:
        translated = translate(module, to=level, search_path=search_path)
    except McplError as e:
        return LevelFeedback(name, "", list(e.diagnostics))
    text = print_module(translated)
    command = f"mcl translate --to {level} {module.file}"
    try:
        again = check(parse(text, name), search_path)
    except McplError as e:  # the printed translation does not parse: a bug in translate
        again = None
        problems = list(e.diagnostics)
    else:
        problems = again.errors
    notes = []
    moved = {f.name: f for f in again.module.functions} if again is not None else {}
    for f in translated.functions:
        original = next((g for g in module.functions if g.name == f.name), None)
        if original is None or original.hardware == f.hardware:
            continue
        at = moved.get(f.name)
        related = (Related(at.span, f"'{f.name}' in the translated text"),) if at else ()
        d = info("feedback-level",
                 f"feedback for '{f.name}' translated from '{original.hardware}' to "
                 f"'{f.hardware}': the locations that follow are lines of the translated "
                 f"text (shown as {name}; `{command}` prints it)",
                 original.span, "write the translated version to a file to refine it further",
                 related)
        d.data.update(level=level, translated_file=name)
        notes.append(d)
    if notes:
        notes[0].data["translated_source"] = text
    if problems:
        # The translation's own checks failed: report where, in the translated text.
        return LevelFeedback(name, text, notes + [
            info("feedback-level", "the translated version does not check, so it gets no "
                                   "feedback (a bug in mcl translate: please report it)",
                 module.functions[0].span if module.functions else None)] + problems)
    return LevelFeedback(name, text, notes + feedback(again, values=values, only=only,
                                                      resources=resources,
                                                      specialize=specialize))
