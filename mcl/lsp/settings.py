"""The server's configuration: what the client sends in ``initializationOptions`` and
``workspace/didChangeConfiguration`` (the ``mcl`` section of the editor settings)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Settings:
    """``feedback``: whether performance feedback runs at all; ``feedback_passes``: the
    names of the passes to run (None: every pass); ``values``: example values of
    parameters for the analyses (``{"n": 2048}``), overriding parameter defaults;
    ``hwd_paths``: extra directories of hardware descriptions; ``debounce_ms``: how long
    to wait after an edit before checking the document again."""

    feedback: bool = True
    feedback_passes: tuple[str, ...] | None = None
    values: dict[str, int | float] = field(default_factory=dict)
    hwd_paths: tuple[str, ...] = ()
    debounce_ms: int = 120

    @property
    def search_path(self) -> tuple[str, ...]:
        """Configured directories, then those of MCL_HWD_PATH (as ``mcl check`` reads them)."""
        env = tuple(p for p in os.environ.get("MCL_HWD_PATH", "").split(os.pathsep) if p)
        return self.hwd_paths + tuple(p for p in env if p not in self.hwd_paths)

    def merged(self, options: Any) -> Settings:
        """These settings updated by a JSON object from the client.

        Accepts both the bare object and one wrapped in ``{"mcl": {...}}`` (VS Code
        sends the whole section); unknown keys and values of the wrong type are
        ignored rather than failing the whole configuration."""
        if not isinstance(options, dict):
            return self
        if isinstance(options.get("mcl"), dict):
            options = options["mcl"]
        changes: dict[str, Any] = {}
        fb = options.get("feedback")
        if isinstance(fb, bool):
            changes["feedback"] = fb
        elif isinstance(fb, dict):
            if isinstance(fb.get("enabled"), bool):
                changes["feedback"] = fb["enabled"]
            if "passes" in fb:
                changes["feedback_passes"] = _names(fb["passes"])
        if "feedbackPasses" in options:
            changes["feedback_passes"] = _names(options["feedbackPasses"])
        values = options.get("values", options.get("parameterValues"))
        if isinstance(values, dict):
            changes["values"] = {str(k): v for k, v in values.items()
                                 if isinstance(v, int | float) and not isinstance(v, bool)}
        paths = options.get("hwdPaths", options.get("hwd_paths"))
        if isinstance(paths, list):
            changes["hwd_paths"] = tuple(str(p) for p in paths if isinstance(p, str))
        debounce = options.get("debounceMs")
        if isinstance(debounce, int) and not isinstance(debounce, bool) and debounce >= 0:
            changes["debounce_ms"] = debounce
        if not changes:
            return self
        import dataclasses

        return dataclasses.replace(self, **changes)


def _names(value: Any) -> tuple[str, ...] | None:
    """A list of pass names; anything else (null, "all") means every pass."""
    if isinstance(value, list):
        return tuple(str(v) for v in value)
    return None
