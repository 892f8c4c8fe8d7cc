"""What the scripts that time example versions on kinds of data share
(histogram_data.py, spmv_data.py): each version's predicted time at a level, and one
timed row, the version's best launch behind mcl.opencl.conditions.keep_awake, beside
that prediction."""

from __future__ import annotations

from pathlib import Path


def predicted_times(paths: dict[str, Path], level: str, values: dict) -> dict[str, float]:
    """The feedback's predicted seconds of each version at ``level`` with ``values``."""
    import mcl
    from mcl.analyses.level import feedback_at_level
    out = {}
    for v, path in paths.items():
        for d in feedback_at_level(mcl.check(path), level, values=values,
                                   only=("time",)).diagnostics:
            if d.code == "feedback-time":
                out[v] = d.data["seconds"]
    return out


def timed_row(kernel, version: str, predicted: dict[str, float], repeats: int,
              ok: bool, label: dict, **args) -> dict:
    """The best of ``repeats`` launches of ``kernel`` with ``args``, each behind the
    awake kernel, as a row (``label``'s items, the version, the seconds, whether its
    result was right and its prediction), printed as it is made."""
    from mcl.opencl.conditions import keep_awake
    awake = keep_awake(kernel.context, kernel.queue)
    t = kernel.time(repeat=repeats, before=awake, **args)
    row = {**label, "version": version, "seconds": t, "correct": ok,
           "predicted_seconds": predicted.get(version)}
    kind = " ".join(str(x) for x in label.values())
    print(f"{kind:10s} {version:21s}: {t * 1e6:7.1f} us (predicted "
          f"{predicted.get(version, 0) * 1e6:.1f}), correct {ok}", flush=True)
    return row
