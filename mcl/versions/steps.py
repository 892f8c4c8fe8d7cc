"""What changed at each refinement step: the feedback that disappeared and appeared
(the analyses' messages of the parent against those of the child, each at its own
level) and the unified diff of the two texts."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mcl.diagnostics import Diagnostic, McplError
from mcl.versions.discover import Version, VersionSet


@dataclass
class FeedbackItem:
    code: str
    message: str
    line: int | None

    def to_json(self) -> dict:
        return {"code": self.code, "message": self.message, "line": self.line}


@dataclass
class Step:
    """The step from ``parent`` to ``child``."""

    parent: str
    child: str
    why: str
    disappeared: list[FeedbackItem] = field(default_factory=list)
    appeared: list[FeedbackItem] = field(default_factory=list)
    kept: int = 0
    #: the same finding with other figures (before, after): a count, a roofline
    changed: list[tuple[FeedbackItem, FeedbackItem]] = field(default_factory=list)
    diff: str = ""
    added_lines: int = 0
    removed_lines: int = 0

    def to_json(self) -> dict:
        return {"parent": self.parent, "child": self.child, "why": self.why,
                "feedback_disappeared": [f.to_json() for f in self.disappeared],
                "feedback_appeared": [f.to_json() for f in self.appeared],
                "feedback_changed": [{"before": a.to_json(), "after": b.to_json()}
                                     for a, b in self.changed],
                "feedback_kept": self.kept, "diff": self.diff,
                "lines_added": self.added_lines, "lines_removed": self.removed_lines}


def feedback_of(v: Version, values: dict | None = None) -> list[Diagnostic]:
    """The performance feedback of a version at its own level ([] if it does not check),
    with ``values`` for the parameters it has."""
    f = v.function_node
    if v.checked is None or v.checked.has_errors or f is None:
        return []
    from mcl.analyses import feedback
    mine = {p.name: values[p.name] for p in f.params if values and p.name in values}
    try:
        return [d for d in feedback(v.checked, values=mine or None)
                if d.code.startswith("feedback")]
    except McplError as e:
        return list(e.diagnostics)


def feedback_diff(before: list[Diagnostic], after: list[Diagnostic]
                  ) -> tuple[list[FeedbackItem], list[FeedbackItem], int]:
    """(disappeared, appeared, number kept): messages compared by code and text,
    since line numbers move with every edit."""
    def key(d: Diagnostic) -> tuple[str, str]:
        return d.code, d.message

    old = {key(d): d for d in before}
    new = {key(d): d for d in after}
    gone = [_item(d) for k, d in old.items() if k not in new]
    came = [_item(d) for k, d in new.items() if k not in old]
    return gone, came, sum(1 for k in new if k in old)


def pair_changed(gone: list[FeedbackItem], came: list[FeedbackItem]
                 ) -> tuple[list[FeedbackItem], list[FeedbackItem],
                            list[tuple[FeedbackItem, FeedbackItem]]]:
    """Split off the messages that stayed but with other figures: same code, mostly the
    same words (the statistics, a reuse count that shrank). What remains disappeared or
    appeared outright: the findings a step removed or caused."""
    import re

    def words(text: str) -> list[str]:
        return re.sub(r"[\d.]+", "#", text).split()

    pairs, left = [], list(came)
    for g in gone:
        best, score = None, 0.6
        for c in left:
            if c.code != g.code:
                continue
            r = difflib.SequenceMatcher(None, words(g.message), words(c.message)).ratio()
            if r >= score:
                best, score = c, r
        if best is not None:
            pairs.append((g, best))
            left.remove(best)
    paired = {id(g) for g, _ in pairs}
    return [g for g in gone if id(g) not in paired], left, pairs


def _item(d: Diagnostic) -> FeedbackItem:
    return FeedbackItem(d.code, d.message, d.span.line if d.span else None)


def code_diff(a: Version, b: Version) -> tuple[str, int, int]:
    lines = list(difflib.unified_diff(a.text.splitlines(keepends=True),
                                      b.text.splitlines(keepends=True),
                                      fromfile=Path(a.file).name if "@" not in a.name else a.name,
                                      tofile=Path(b.file).name if "@" not in b.name else b.name))
    added = sum(1 for ln in lines if ln.startswith("+") and not ln.startswith("+++"))
    removed = sum(1 for ln in lines if ln.startswith("-") and not ln.startswith("---"))
    return "".join(ln if ln.endswith("\n") else ln + "\n" for ln in lines), added, removed


def steps(vs: VersionSet, values: dict | None = None, progress: Any = None) -> list[Step]:
    """One step per version that has a parent, in tree order. The feedback of every
    version is computed at the same ``values`` (else each at its own parameter
    defaults), so that counts in the messages change only where the code did."""
    cache: dict[str, list[Diagnostic]] = {}

    def fb(v: Version) -> list[Diagnostic]:
        if v.name not in cache:
            if progress:
                progress(f"feedback of {v.name}")
            cache[v.name] = feedback_of(v, values)
        return cache[v.name]

    out = []
    for v in vs.versions:
        parent = vs.get(v.parent)
        if parent is None:
            continue
        out.append(_step(parent, v, fb(parent), fb(v)))
    return out


def describe(step: Step) -> str:
    """The feedback diff as Markdown (the language server shows this)."""
    lines = [f"**{step.child}** refines **{step.parent}** ({step.why}; "
             f"+{step.added_lines} −{step.removed_lines} lines)", ""]
    if not step.disappeared and not step.appeared and not step.changed:
        lines.append(f"The feedback is the same ({step.kept} messages).")
    if step.disappeared:
        lines.append("Feedback that disappeared:")
        lines += [f"- ~~{f.message}~~ ({f.code})" for f in step.disappeared]
    if step.appeared:
        lines.append("Feedback that appeared:")
        lines += [f"- {f.message} ({f.code}, line {f.line})" for f in step.appeared]
    if step.changed:
        lines.append("Feedback with other figures:")
        lines += [f"- {b.message} (was: {a.message})" for a, b in step.changed]
    if step.kept and (step.disappeared or step.appeared or step.changed):
        lines.append(f"{step.kept} messages stayed the same.")
    return "\n".join(lines)


def previous_version(file: str | Path, text: str | None = None,
                     search_path: tuple[str, ...] = ()) -> tuple[Version, Step] | None:
    """The version ``file`` refines among the versions in its folder (``text``: its
    unsaved contents) and the step from it; None when it refines none."""
    from mcl.versions.discover import from_files
    from mcl.versions.timing import timing_sizes

    p = Path(file).resolve()
    files = sorted(p.parent.glob("*.mcpl"))
    if p not in files:
        files.append(p)
    vs = from_files(files, search_path=search_path, texts={str(p): text} if text else None)
    me = next((v for v in vs.versions if Path(v.file).resolve() == p), None)
    parent = vs.get(me.parent) if me is not None else None
    if me is None or parent is None:
        return None
    values = timing_sizes(vs, {})
    return parent, _step(parent, me, feedback_of(parent, values), feedback_of(me, values))


def _step(parent: Version, child: Version, before: list[Diagnostic],
          after: list[Diagnostic]) -> Step:
    gone, came, kept = feedback_diff(before, after)
    gone, came, changed = pair_changed(gone, came)
    diff, added, removed = code_diff(parent, child)
    return Step(parent.name, child.name, child.why_parent, gone, came, kept, changed,
                diff, added, removed)
