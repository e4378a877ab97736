"""Is a sentence a view or a plain account? A logistic regression over its sentence vector.

The cue and parse readers find views that say whose they are ("I reckon", "Gina insists");
a bare evaluation ("that sunscreen is useless", "Worst 34 quid I've ever spent") has no such
word, and its meaning is the only sign. The model (``data/subjectivity_model.json``, fitted
by ``enfold bench train-subjectivity`` on sentences written for the purpose) belongs to one
embedder: with any other, :func:`view_probability` gives None and only the readers decide.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["is_view", "view_probability"]


@functools.cache
def _model() -> dict[str, Any] | None:
    try:
        raw = resources.files("enfold").joinpath("data", "subjectivity_model.json").read_text(
            encoding="utf-8")
    except FileNotFoundError:
        return None
    model: dict[str, Any] = json.loads(raw)
    model["w"] = np.asarray(model["weights"], dtype=np.float32)
    return model


def view_probability(vector: Any, embedder: str | None) -> float | None:
    """P(view) of a text from its ``embedder`` vector; None when the model is for another
    embedder (or there is no vector)."""
    model = _model()
    if model is None or vector is None or embedder != model["embedder"]:
        return None
    v = np.asarray(vector, dtype=np.float32)
    if v.shape != model["w"].shape:
        return None
    return float(1.0 / (1.0 + np.exp(-(float(v @ model["w"]) + float(model["bias"])))))


def is_view(vector: Any, embedder: str | None) -> bool:
    """Whether the model reads the text as a view (at its precision-first threshold)."""
    p = view_probability(vector, embedder)
    model = _model()
    return p is not None and model is not None and p >= float(model["threshold"])
