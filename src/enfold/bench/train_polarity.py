"""Fit the stance-polarity classifier over sentence embeddings (``enfold bench
train-polarity``).

The training sentences are three sets. The first (``polarity-train.jsonl``, 286) was
written for this model by the session that built it, after reading only the tune parts of
the probes, in other words and domains than theirs (transport, health care, shops and
trades, schools, software, venues, travel, culture, local politics; prose and chat): each
evaluation is put once for and once against the same thing ("The new bus route saves me
twenty minutes ..." / "The new bus route is a disaster ..."), so what the model can learn is
the lean, not the topic. The other two (``polarity-train-b.jsonl``, 520;
``polarity-train-c.jsonl``, 480) were written later by two helpers with briefs of their own
who read no project file (one listed the output folder): twelve registers (texting, diary,
e-mail, reviews, voice notes, board minutes, ...), and leans shown by an action or a
decision ("went back to driving after the first week", "renewed my membership for another
full year"), reported of another person, or hedged, besides stated ones. No probe sentence
is read here.

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


#: The bundled training sets, by part: ``train`` (286 sentences, the first, whose twins sit
#: ``n/2`` rows apart), ``train-b`` and ``train-c`` (written later by two helpers with briefs
#: of their own, without reading the project's probes; twins share a ``pair`` value).
PARTS = ("train", "train-b", "train-c")


def training_set() -> tuple[list[str], list[int], list[str]]:
    """The sentences, their labels (1 = for) and each one's twin group: a for/against pair
    shares a group, so cross-validation never scores a sentence by a model that saw its
    twin."""
    texts: list[str] = []
    labels: list[int] = []
    groups: list[str] = []
    for part in PARTS:
        path = bundled("polarity", part)
        if not path.exists():
            continue
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        half = len(rows) // 2
        for i, row in enumerate(rows):
            texts.append(str(row["text"]))
            labels.append(1 if row["label"] == "positive" else 0)
            groups.append(f"{part}:{row.get('pair') or i % half}")
    return texts, labels, groups


def train(embedder: Any, folds: int = 5, seed: int = 0) -> dict[str, Any]:
    texts, labels, groups = training_set()
    x = np.asarray(embedder.embed(texts), dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    # Folds keep a for/against pair together, so a sentence is never scored by a model
    # that saw its twin.
    names = sorted(set(groups))
    pair = np.searchsorted(np.array(names), np.array(groups))
    order = np.random.default_rng(seed).permutation(len(names))
    fold_of = np.empty(len(names), dtype=int)
    fold_of[order] = np.arange(len(names)) % folds
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
