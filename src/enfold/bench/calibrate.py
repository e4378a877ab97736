"""Calibrate the local planner's similarity thresholds for an embedder, on labelled data.

Data: the bundled demo scenario and the CogEval-Bench scenarios, whose events carry gold
concepts (distractors have none). Method, per threshold:

* ``cluster`` — pairs of events: positive when both have the same gold concept. The
  threshold maximizes F0.5 of "cosine ≥ t ⇒ same concept" (precision weighs double: a wrong
  cluster makes a wrong concept, a missed pair only delays one).
* ``assign`` — an event against the leave-one-out centroid of every gold concept: positive
  for its own concept. Threshold maximizing F0.5 likewise.
* ``parent`` — pairs of gold concept centroids: positive when they share a hierarchy parent.
  Threshold maximizing F0.5.
* ``group`` — the cut of consolidation's average-linkage grouping
  (:mod:`enfold.consolidate.group`): each scenario's events clustered at once, groups of at
  least three kept, scored by event-overlap F1 against the gold concepts
  (:func:`enfold.bench.metrics.event_overlap_f1`); the cut with the best mean F1 over a
  grid of 0.05–0.60, on this data and issue 20's tuning scenarios (``cogeval-tune``).

The result, with the data and the method, is recorded in ``enfold/data/calibration.json``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np


def best_threshold(pos: Sequence[float], neg: Sequence[float], beta: float = 1.0
                   ) -> dict[str, float]:
    """The cut t maximizing F_beta of (score ≥ t) against the labels."""
    scores = np.array([*pos, *neg])
    labels = np.array([1] * len(pos) + [0] * len(neg))
    best = {"threshold": 0.5, "f": 0.0, "precision": 0.0, "recall": 0.0}
    if not len(pos):
        return best
    for t in np.unique(np.round(scores, 3)):
        pred = scores >= t
        tp = float((pred & (labels == 1)).sum())
        if tp == 0:
            continue
        p = tp / float(pred.sum())
        r = tp / float(len(pos))
        f = (1 + beta**2) * p * r / (beta**2 * p + r)
        if f > best["f"]:
            best = {"threshold": float(t), "f": f, "precision": p, "recall": r}
    return best


def _groups(extra: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Labelled groups: texts with gold concept labels and sibling sets (bundled data, and
    the packaged scenario folders named in ``extra``)."""
    data = resources.files("enfold") / "data"
    out: list[dict[str, Any]] = []
    events = [json.loads(x) for x in (data / "demo.jsonl").read_text("utf-8").splitlines()
              if x.strip()]
    gold = json.loads((data / "demo_gold.json").read_text("utf-8"))
    by_event = {e: c["id"] for c in gold["concepts"] for e in c["events"]}
    out.append({
        "name": "demo",
        "texts": [e["text"] for e in events],
        "labels": [by_event.get(e["id"]) for e in events],
        "parents": [h["children"] for h in gold.get("hierarchy", [])],
    })
    root = resources.files("enfold") / "bench" / "data"
    entries = [(name, e) for name in ("cogeval", *extra)
               for e in sorted((root / name).iterdir(), key=lambda p: p.name)]
    for folder, entry in entries:
        if not entry.name.endswith(".json"):
            continue
        sc = json.loads(entry.read_text("utf-8"))
        out.append({
            "name": f"{folder}/{sc['id']}",
            "texts": [e["text"] for e in sc["events"]],
            "labels": [e.get("gold_concept") for e in sc["events"]],
            "parents": [h["children"] for h in sc["gold"].get("hierarchy", [])],
        })
    return out


def calibrate(embedder: Any) -> dict[str, Any]:
    pair_pos: list[float] = []
    pair_neg: list[float] = []
    cen_pos: list[float] = []
    cen_neg: list[float] = []
    par_pos: list[float] = []
    par_neg: list[float] = []
    names = []
    for grp in _groups():
        names.append(grp["name"])
        vecs = np.asarray(embedder.embed(grp["texts"]), dtype=np.float32)
        labels = grp["labels"]
        sims = vecs @ vecs.T
        for i, j in itertools.combinations(range(len(labels)), 2):
            if labels[i] is None and labels[j] is None:
                continue
            (pair_pos if labels[i] == labels[j] else pair_neg).append(float(sims[i, j]))
        concepts = sorted({x for x in labels if x is not None})
        members = {c: [i for i, x in enumerate(labels) if x == c] for c in concepts}
        for i, lab in enumerate(labels):
            for c in concepts:
                idx = [j for j in members[c] if j != i]
                if not idx:
                    continue
                cen = vecs[idx].mean(axis=0)
                cos = float(vecs[i] @ cen / (np.linalg.norm(cen) or 1.0))
                (cen_pos if lab == c else cen_neg).append(cos)
        cents = {c: vecs[members[c]].mean(axis=0) for c in concepts}
        for a, b in itertools.combinations(concepts, 2):
            ca, cb = cents[a], cents[b]
            cos = float(ca @ cb / ((np.linalg.norm(ca) * np.linalg.norm(cb)) or 1.0))
            sib = any(a in p and b in p for p in grp["parents"])
            (par_pos if sib else par_neg).append(cos)
    group = best_group_cut(embedder)
    cluster = best_threshold(pair_pos, pair_neg, beta=0.5)
    assign = best_threshold(cen_pos, cen_neg, beta=0.5)
    parent = best_threshold(par_pos, par_neg, beta=0.5)
    return {
        "data": names,
        "method": __doc__.split("Method, per threshold:")[1].split("The result")[0].strip()
        if __doc__ else "",
        "pairs": {"positive": len(pair_pos), "negative": len(pair_neg)},
        "result": {"cluster": cluster, "assign": assign, "parent": parent, "group": group},
        "thresholds": {"cluster": cluster["threshold"], "assign": assign["threshold"],
                       "parent": parent["threshold"], "group": group["threshold"]},
    }


#: The cuts tried for grouping: mean cosine 0.05 to 0.60 in steps of 0.025.
GROUP_GRID: tuple[float, ...] = tuple(round(0.05 + 0.025 * i, 3) for i in range(23))


def best_group_cut(embedder: Any, grid: Sequence[float] = GROUP_GRID) -> dict[str, Any]:
    """The average-linkage cut with the best mean event-overlap F1 (see the module doc)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    from enfold.bench.metrics import event_overlap_f1

    data = []
    for grp in _groups(extra=("cogeval-tune",)):
        vecs = np.asarray(embedder.embed(grp["texts"]), dtype=np.float64)
        vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        dist = np.clip(1.0 - vecs @ vecs.T, 0.0, 2.0)
        np.fill_diagonal(dist, 0.0)
        tree = linkage(squareform(dist, checks=False), method="average")
        labels = grp["labels"]
        gold = [[i for i, x in enumerate(labels) if x == c]
                for c in sorted({x for x in labels if x is not None})]
        data.append((tree, gold))
    best: dict[str, Any] = {"threshold": 0.3, "f": -1.0, "scenarios": len(data)}
    for t in grid:
        scores = []
        for tree, gold in data:
            cut = fcluster(tree, t=1.0 - t, criterion="distance")
            groups: dict[int, list[int]] = {}
            for i, lab in enumerate(cut):
                groups.setdefault(int(lab), []).append(i)
            found = [g for g in groups.values() if len(g) >= 3]
            scores.append(event_overlap_f1(found, gold)["f1"])
        f = float(np.mean(scores))
        if f > best["f"]:
            best = {"threshold": float(t), "f": f, "scenarios": len(data)}
    return best


def record(results: dict[str, dict[str, Any]], path: Path) -> None:
    existing: dict[str, Any] = {}
    if path.exists():
        existing = json.loads(path.read_text("utf-8"))
    existing.setdefault("embedders", {}).update(results)
    path.write_text(json.dumps(existing, indent=2, sort_keys=True) + "\n", "utf-8")
