"""Similarity thresholds per embedder, read from the recorded calibration.

Cosine similarities mean different things under different embedders, so the local planner's
thresholds are calibrated per embedder on labelled data and recorded, with the data and
method, in ``enfold/data/calibration.json`` (written by ``enfold calibrate``; see
:mod:`enfold.bench.calibrate`). Unknown embedders get conservative defaults.
"""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Any

DEFAULTS = {"assign": 0.55, "cluster": 0.45, "parent": 0.35, "group": 0.45}


@lru_cache(maxsize=1)
def recorded() -> dict[str, Any]:
    """The calibration file's content ({} if absent)."""
    try:
        text = (resources.files("enfold") / "data" / "calibration.json").read_text("utf-8")
    except FileNotFoundError:
        return {}
    data: dict[str, Any] = json.loads(text)
    return data


def thresholds_for(embedder_name: str | None) -> dict[str, float]:
    """{"assign", "cluster", "parent", "group"} thresholds for an embedder (by name prefix)."""
    if not embedder_name:
        return dict(DEFAULTS)
    entries = recorded().get("embedders", {})
    family = embedder_name.split(":", 1)[0]
    entry = entries.get(embedder_name) or entries.get(family)
    if not entry:
        return dict(DEFAULTS)
    return {k: float(entry["thresholds"].get(k, v)) for k, v in DEFAULTS.items()}
