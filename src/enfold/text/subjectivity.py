"""Is a sentence a view or a plain account? A logistic regression over its sentence vector.

The cue and parse readers find views that say whose they are ("I reckon", "Gina insists");
a bare evaluation ("that sunscreen is useless", "Worst 34 quid I've ever spent") has no such
word, and its meaning is the only sign. The models (``data/subjectivity_model.json``, fitted
by ``enfold bench train-subjectivity`` on sentences written for the purpose) belong to one
embedder: with any other, :func:`view_probability` gives None and only the readers decide.
"""

from __future__ import annotations

import functools
import json
from importlib import resources
from typing import Any

import numpy as np

__all__ = ["is_view", "view_probability"]


def packaged_model(filename: str) -> dict[str, Any] | None:
    """A model recorded in ``enfold/data/`` (None when the file is not there)."""
    try:
        raw = resources.files("enfold").joinpath("data", filename).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    model: dict[str, Any] = json.loads(raw)
    return model


def logistic_probability(model: dict[str, Any], vector: Any) -> float | None:
    """The logistic model's probability for ``vector`` (``model["w"]`` its weights as an
    array, ``model["bias"]``); None when the vector has another size."""
    v = np.asarray(vector, dtype=np.float32)
    if v.shape != model["w"].shape:
        return None
    return float(1.0 / (1.0 + np.exp(-(float(v @ model["w"]) + float(model["bias"])))))


@functools.cache
def _models() -> dict[str, Any] | None:
    models = packaged_model("subjectivity_model.json")
    if models is not None:
        models["statements"]["w"] = np.asarray(models["statements"]["weights"],
                                               dtype=np.float32)
    return models


def view_probability(vector: Any, embedder: str | None) -> float | None:
    """P(view) of a statement from its ``embedder`` vector; None when the model is for
    another embedder (or there is no vector)."""
    models = _models()
    if models is None or vector is None or embedder != models["embedder"]:
        return None
    return logistic_probability(models["statements"], vector)


def is_view(vector: Any, embedder: str | None) -> bool:
    """Whether the model reads the text as a view (at its precision-first threshold)."""
    p = view_probability(vector, embedder)
    models = _models()
    return p is not None and models is not None \
        and p >= float(models["statements"]["threshold"])
