"""Fit the stance-polarity classifier over sentence embeddings (``enfold bench
train-polarity``).

The training sentences (``polarity-train.jsonl``, 286 of them) were written for this model
by the session that built it, after reading only the tune parts of the probes and in other
words and domains than theirs (transport, health care, shops and trades, schools, software,
venues, travel, culture, local politics; prose and chat): each evaluation is put once for and
once against the same thing ("The new bus route saves me twenty minutes ..." / "The new bus
route is a disaster ..."), so what the model can learn is the lean, not the topic. No probe
sentence is read here.

The threshold is symmetric (positive at p ≥ t, negative at p ≤ 1 − t, no reading between)
and is the lowest one whose cross-validated accuracy on the sentences it reads reaches
:data:`TARGET_ACCURACY`: a wrong lean makes a repeat look like a change of mind.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from enfold.bench.train_subjectivity import fit, save
from enfold.bench.understand import bundled

__all__ = ["save", "train", "training_set"]

TARGET_ACCURACY = 0.97


def training_set() -> tuple[list[str], list[int]]:
    texts: list[str] = []
    labels: list[int] = []
    with open(bundled("polarity", "train"), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                texts.append(str(row["text"]))
                labels.append(1 if row["label"] == "positive" else 0)
    return texts, labels


def train(embedder: Any, folds: int = 5, seed: int = 0) -> dict[str, Any]:
    texts, labels = training_set()
    x = np.asarray(embedder.embed(texts), dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    # Folds keep a for/against pair together (rows i and i + n/2 share a target), so a
    # sentence is never scored by a model that saw its twin.
    half = len(y) // 2
    pair = np.arange(len(y)) % half
    order = np.random.default_rng(seed).permutation(half)
    fold_of = np.empty(half, dtype=int)
    fold_of[order] = np.arange(half) % folds
    scores = np.zeros(len(y))
    for k in range(folds):
        test = fold_of[pair] == k
        w, b = fit(x[~test], y[~test])
        scores[test] = 1.0 / (1.0 + np.exp(-(x[test] @ w + b)))
    threshold = 0.95
    for t in np.linspace(0.5, 0.95, 46):
        read = (scores >= t) | (scores <= 1 - t)
        if read.sum() and ((scores[read] >= 0.5) == (y[read] == 1)).mean() >= TARGET_ACCURACY:
            threshold = float(t)
            break
    read = (scores >= threshold) | (scores <= 1 - threshold)
    cv = {"accuracy_at_0.5": round(float(((scores >= 0.5) == (y == 1)).mean()), 4),
          "read": round(float(read.mean()), 4),
          "accuracy_read": round(float(((scores[read] >= 0.5) == (y[read] == 1)).mean())
                                 if read.sum() else 0.0, 4)}
    w, b = fit(x, y)
    return {"embedder": embedder.name, "threshold": round(threshold, 4), "bias": b,
            "weights": [round(float(v), 6) for v in w], "examples": len(y),
            "cross_validated": cv}
