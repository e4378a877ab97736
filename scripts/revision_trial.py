"""The change-of-mind classifier tried in session 29 (issue 19; not landed), repeatable:
``python scripts/revision_trial.py [THRESHOLD ...]``; ``--oracle`` instead folds the
tuning sets as if every later message of a true pair were read as a change of mind (the
most a reader of single messages could give); ``--cues`` prints how the parse's cue reader
(:func:`enfold.text.stance.revision`) reads each helper set's messages (``own`` and
``other`` are changes, ``none`` is not): set A is the one tuned on, set B only measured.

Fits a logistic regression over MiniLM sentence vectors plus TF-IDF word uni- and bigrams
(scikit-learn, installed with sentence-transformers) on the two helper-written sets
``revision-train-a.jsonl`` and ``revision-train-b.jsonl`` (label ``own``: the writer's
own change of mind; ``other`` and ``none`` negative), prints each set's scores when the
model is fitted on the other one (ROC AUC, recall at precision 0.9 and 0.8), then folds
the supersession tuning sets with the model fitted on both read as a change-of-mind cue
(a message it reads at p >= THRESHOLD, no cue found, gets its writer's views marked as
revising, or the whole text as the writer's view) and prints what ``bench understand``
prints for them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.sparse import csr_matrix, hstack
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

import enfold.text.annotate as annotate_module
import enfold.write.planner_local as planner_module
from enfold.bench.understand import bundled, run_supersede
from enfold.embed import make_embedder
from enfold.text.claims import speaker_view
from enfold.text.stance import bare_view, reports_another


def _rows(part: str) -> list[dict[str, Any]]:
    with open(bundled("revision", part), encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def _recall_at(scores: np.ndarray, y: np.ndarray, precision: float) -> float | None:
    for t in np.linspace(0.05, 0.99, 95):
        picked = scores >= t
        if picked.sum() >= 5 and y[picked].mean() >= precision:
            return round(float((picked & (y == 1)).sum() / y.sum()), 3)
    return None


def cues() -> None:
    from enfold.text.claims import holder_name
    from enfold.text.stance import revision

    me = holder_name("Alex")
    for part in ("train-a", "train-b"):
        rows = _rows(part)
        read = [revision(str(r["text"]), "Alex", me) is not None for r in rows]
        change = [r["label"] != "none" for r in rows]
        tp = sum(a and b for a, b in zip(read, change, strict=True))
        fp = sum(a and not b for a, b in zip(read, change, strict=True))
        fn = sum(b and not a for a, b in zip(read, change, strict=True))
        print(f"{part}: precision {tp / max(1, tp + fp):.3f}  recall {tp / max(1, tp + fn):.3f}"
              f"  found {tp}  false {fp}  missed {fn}")


def oracle() -> None:
    emb = make_embedder("minilm")
    original = annotate_module.annotate
    for part in ("tune", "tune-i", "tune-p", "tune-q", "tune-long"):
        path = Path(bundled("supersede", part))
        with open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
        later = {str(r["events"][int(p["new"])]["text"]) for r in rows for p in r["pairs"]
                 if p["supersedes"]}

        def annotate(text: str, later: set[str] = later, **kw: Any) -> Any:
            ann = original(text, **kw)
            if ann.revises or text not in later:
                return ann
            return _as_change(ann, text, kw.get("speaker"))

        planner_module.annotate = annotate  # type: ignore[assignment]
        try:
            r = run_supersede(path, embedder=emb)
        finally:
            planner_module.annotate = original
        print(f"oracle supersede/{part}: "
              + "  ".join(f"{k}={v}" for k, v in r.items() if k != "errors"))


def _as_change(ann: Any, text: str, speaker: str | None) -> Any:
    """``ann`` with the writer's views of ``text`` marked as revising (or the whole text as
    the writer's view, when it holds none and reports no one else's)."""
    own = [c for c in ann.claims if c.holder_is_speaker]
    if own:
        span = (min(c.start for c in own), max(c.end for c in own))
        return annotate_module.replace(ann, revises=True, revised=span)
    if ann.claims or reports_another(text):
        return ann
    me = annotate_module.holder_name(speaker)
    view = bare_view(text, speaker, me) or speaker_view(text, speaker)
    view = annotate_module.replace(view, start=0, end=len(text))
    return annotate_module.replace(ann, claims=(view,), revises=True, revised=(0, len(text)))


def main(thresholds: list[float]) -> None:
    emb = make_embedder("minilm")
    sets = {p: _rows(p) for p in ("train-a", "train-b")}
    texts = {p: [str(r["text"]) for r in rows] for p, rows in sets.items()}
    ys = {p: np.array([r["label"] == "own" for r in rows], int) for p, rows in sets.items()}
    xs = {p: np.asarray(emb.embed(t), float) for p, t in texts.items()}

    def fitted(parts: list[str]) -> tuple[TfidfVectorizer, LogisticRegression]:
        words = [t for p in parts for t in texts[p]]
        vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit(words)
        x = hstack([vec.transform(words), csr_matrix(np.vstack([xs[p] for p in parts]))])
        model = LogisticRegression(C=2, max_iter=3000).fit(
            x.tocsr(), np.concatenate([ys[p] for p in parts]))
        return vec, model

    for fit_on, test_on in (("train-a", "train-b"), ("train-b", "train-a")):
        vec, model = fitted([fit_on])
        s = model.predict_proba(hstack([vec.transform(texts[test_on]),
                                        csr_matrix(xs[test_on])]).tocsr())[:, 1]
        print(f"{fit_on} -> {test_on}: auc {roc_auc_score(ys[test_on], s):.3f}  "
              f"recall at precision 0.9 {_recall_at(s, ys[test_on], 0.9)}, "
              f"0.8 {_recall_at(s, ys[test_on], 0.8)}")
    vec, model = fitted(["train-a", "train-b"])
    original = annotate_module.annotate
    for threshold in thresholds:
        def annotate(text: str, threshold: float = threshold, **kw: Any) -> Any:
            ann = original(text, **kw)
            vector, name = kw.get("vector"), kw.get("embedder")
            if ann.revises or vector is None or name != emb.name:
                return ann
            x = hstack([vec.transform([text]), csr_matrix(np.asarray(vector, float)[None, :])])
            if model.predict_proba(x.tocsr())[0, 1] < threshold:
                return ann
            return _as_change(ann, text, kw.get("speaker"))

        planner_module.annotate = annotate  # type: ignore[assignment]
        try:
            for part in ("tune", "tune-i", "tune-p", "tune-q", "tune-long"):
                r = run_supersede(Path(bundled("supersede", part)), embedder=emb)
                print(f"threshold {threshold} supersede/{part}: "
                      + "  ".join(f"{k}={v}" for k, v in r.items() if k != "errors"))
        finally:
            planner_module.annotate = original


if __name__ == "__main__":
    if "--oracle" in sys.argv:
        oracle()
    elif "--cues" in sys.argv:
        cues()
    else:
        main([float(a) for a in sys.argv[1:]] or [0.6, 0.75])
