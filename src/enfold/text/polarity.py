"""Is a view for or against what it is about? A logistic regression over its sentence vector.

The lexicon of :func:`enfold.text.claims._stance` knows a few hundred evaluative words; a
view says which way it leans in many more ("the shoes gave me blisters", "totally
overhyped", "it's draining the life out of me"), and that lean is what tells a change of
mind from a repeat. The model (``data/polarity_model.json``, fitted by ``enfold bench
train-polarity`` on ``polarity-train*.jsonl``: 1,286 sentences written for the purpose,
each evaluation put once for and once against the same thing, in domains and words the
probes do not use, stated, shown by an action, reported or hedged) reads the lean from the
meaning. It belongs to one embedder: with any other, :func:`polarity` gives None and the
lexicon alone decides.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from enfold.text.subjectivity import logistic_probability, packaged_model

__all__ = ["polarity", "positive_probability"]


@functools.cache
def _model() -> dict[str, Any] | None:
    model = packaged_model("polarity_model.json")
    if model is not None:
        model["w"] = np.asarray(model["weights"], dtype=np.float32)
    return model


def positive_probability(vector: Any, embedder: str | None) -> float | None:
    """P(the view leans for its target) from its ``embedder`` vector; None when the model is
    for another embedder (or there is no vector)."""
    model = _model()
    if model is None or vector is None or embedder != model["embedder"]:
        return None
    return logistic_probability(model, vector)


def polarity(vector: Any, embedder: str | None) -> str | None:
    """"positive" or "negative" when the model is sure enough (its cross-validated
    threshold), else None."""
    p = positive_probability(vector, embedder)
    model = _model()
    if p is None or model is None:
        return None
    t = float(model["threshold"])
    return "positive" if p >= t else "negative" if p <= 1.0 - t else None
