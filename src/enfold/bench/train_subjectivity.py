"""Fit the view/account classifier over sentence embeddings (``enfold bench
train-subjectivity``).

A view with no stance word ("that sunscreen is useless", "Squirrel-proof, my foot") is what
the parse cannot see; its meaning can. A logistic regression over the embedder's sentence
vectors tells a view from a plain account. It is fitted on sentences written for the
purpose (``subjectivity-train.jsonl``: 700 sentences, many domains and registers, by an
author who did not see the probe) and the tune part of the collapse probe (its facts are
accounts, its claims views). The measure part of the probe is never read here.

A question model fitted the same way (on the probe's questions and on 500 written for the
purpose, all naming a person) was tried and dropped: it learned that naming someone asks for
a view, and fired on 137 of LoCoMo's 377 measured questions ("What are Joanna's hobbies?").
Questions are read by the parse (:func:`enfold.text.stance.view_holder`) instead.

The decision threshold is set for precision on views: a fact taken for an opinion would be
kept from factual questions, which costs more than an opinion read as a fact (the cue and
parse readers still find most of those). The threshold is the lowest one whose precision on
held-out folds reaches :data:`TARGET_PRECISION`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize

from enfold.bench.understand import bundled

TARGET_PRECISION = 0.95
L2 = 1.0


def training_set() -> tuple[list[str], list[int]]:
    texts: list[str] = []
    labels: list[int] = []
    with open(bundled("subjectivity", "train"), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                texts.append(str(row["text"]))
                labels.append(1 if row["label"] == "view" else 0)
    with open(bundled("collapse", "tune"), encoding="utf-8") as fh:
        for line in fh:
            if line.strip():
                row = json.loads(line)
                texts.append(str(row["fact"]["text"]))
                labels.append(0)
                for key in ("claim", "counter_claim"):
                    if row.get(key):
                        texts.append(str(row[key]["text"]))
                        labels.append(1)
    return texts, labels


def fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by L-BFGS."""
    n, d = x.shape

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        z = x @ w[:d] + w[d]
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-9
        value = -np.mean(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps)) \
            + l2 * float(w[:d] @ w[:d]) / (2 * n)
        g = p - y
        grad = np.concatenate([x.T @ g / n + l2 * w[:d] / n, [g.mean()]])
        return float(value), grad

    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B")
    return res.x[:d], float(res.x[d])


def train(embedder: Any, folds: int = 5, seed: int = 0) -> dict[str, Any]:
    """The statement model: a view or a plain account."""
    return {"embedder": embedder.name,
            "statements": _train(embedder, *training_set(), folds=folds, seed=seed)}


def _train(embedder: Any, texts: list[str], labels: list[int], *, folds: int, seed: int
           ) -> dict[str, Any]:
    x = np.asarray(embedder.embed(texts), dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    order = np.random.default_rng(seed).permutation(len(y))
    scores = np.zeros(len(y))
    for k in range(folds):
        test = order[k::folds]
        train_idx = np.setdiff1d(order, test)
        w, b = fit(x[train_idx], y[train_idx])
        scores[test] = 1.0 / (1.0 + np.exp(-(x[test] @ w + b)))
    threshold = 0.5
    for t in np.linspace(0.3, 0.95, 66):
        picked = scores >= t
        if picked.sum() and y[picked].mean() >= TARGET_PRECISION:
            threshold = float(t)
            break
    picked = scores >= threshold
    cv = {"precision": round(float(y[picked].mean()) if picked.sum() else 0.0, 4),
          "recall": round(float((picked & (y == 1)).sum() / max(1, (y == 1).sum())), 4),
          "accuracy": round(float(((scores >= 0.5) == (y == 1)).mean()), 4)}
    w, b = fit(x, y)
    return {"threshold": round(threshold, 4), "bias": b,
            "weights": [round(float(v), 6) for v in w], "examples": len(y),
            "cross_validated": cv}


def save(model: dict[str, Any], path: Path) -> None:
    path.write_text(json.dumps(model) + "\n", encoding="utf-8")
