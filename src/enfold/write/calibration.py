"""Similarity thresholds per embedder, read from the recorded calibration.

Cosine similarities mean different things under different embedders, so the local planner's
thresholds are calibrated per embedder on labelled data and recorded, with the data and
method, in ``enfold/data/calibration.json`` (written by ``enfold calibrate``; see
:mod:`enfold.bench.calibrate`). Unknown embedders get conservative defaults, the
``uncalibrated_*_threshold`` settings.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

from enfold.settings import Settings

#: The defaults of the ``uncalibrated_*_threshold`` settings.
DEFAULTS: dict[str, float] = {"assign": Settings.uncalibrated_assign_threshold,
                              "cluster": Settings.uncalibrated_cluster_threshold,
                              "parent": Settings.uncalibrated_parent_threshold,
                              "group": Settings.uncalibrated_group_threshold}


def uncalibrated(settings: Settings) -> dict[str, float]:
    """The thresholds of an embedder without a recorded calibration under ``settings``."""
    return {"assign": settings.uncalibrated_assign_threshold,
            "cluster": settings.uncalibrated_cluster_threshold,
            "parent": settings.uncalibrated_parent_threshold,
            "group": settings.uncalibrated_group_threshold}


@lru_cache(maxsize=1)
def recorded() -> dict[str, Any]:
    """The calibration file's content ({} if absent)."""
    try:
        text = (resources.files("enfold") / "data" / "calibration.json").read_text("utf-8")
    except FileNotFoundError:
        return {}
    data: dict[str, Any] = json.loads(text)
    return data


def thresholds_for(embedder_name: str | None, settings: Settings | None = None
                   ) -> dict[str, float]:
    """{"assign", "cluster", "parent", "group"} thresholds for an embedder (by name prefix);
    those the calibration does not record are ``settings``' uncalibrated ones."""
    defaults = uncalibrated(settings or Settings())
    if not embedder_name:
        return defaults
    entries = recorded().get("embedders", {})
    family = embedder_name.split(":", 1)[0]
    entry = entries.get(embedder_name) or entries.get(family)
    if not entry:
        return defaults
    return {k: float(entry["thresholds"].get(k, v)) for k, v in defaults.items()}
