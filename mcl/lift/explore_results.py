"""The results of an exploration (:mod:`mcl.lift.explore`): the resumable results
file, and the summaries of its candidates (outcomes, reasons, launches, listing)."""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from mcl.diagnostics import McplError, error


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


class ExploreInterrupted(KeyboardInterrupt):
    """Ctrl-C during a search (:func:`mcl.lift.explore.explore`): a KeyboardInterrupt, so
    that a script stops as it would, which carries what the search found until then.
    ``results`` holds the candidates evaluated (saved to ``results.path``, if any, from
    which the same search resumes); ``tried`` of ``budget`` were tried."""

    def __init__(self, results: Results, tried: int, budget: int):
        super().__init__(f"the search was interrupted after {tried} of {budget} candidates")
        self.results = results
        self.tried = tried
        self.budget = budget


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
        try:    # what permissions do not say (a read-only or special file system)
            p.open("x").close()
        except OSError as e:
            why, hint = f"cannot be written: {(e.strerror or str(e)).lower()}", None
        else:
            p.unlink()
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
