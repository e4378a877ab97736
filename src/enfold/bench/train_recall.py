"""Learn recall's ranking weights (:mod:`enfold.recall.rank`) from labelled questions.

Two kinds of data, each split into a part the weights are fitted on and a part that is only
measured:

* LoCoMo conversations (``locomo10.json`` format): each question of categories 1–4 with its
  evidence turns, asked a day after the last session, as ``bench locomo`` asks it;
* personal streams (``tests/data/recall/personal-*.json`` format: ``events`` with ``id``,
  ``ts``, ``source``, ``text``; ``questions`` with ``q``, ``answer`` and ``at``), whose every
  question has exactly one answer event.

Every question is recalled through the same operators and features as :func:`enfold.recall.
controller.recall`; its candidates are labelled relevant when they are its evidence. The
model is a LambdaMART ensemble (LightGBM's ``lambdarank``: each question's candidates a
group, the ranking's top weighed most) with monotone constraints, or, with ``--method
linear``, weights minimizing a pairwise logistic loss (:func:`enfold.recall.rank.
fit_pairwise`) with each data set weighing the same; it is written with the data, the split
and the measured part's numbers to ``enfold/data/recall_model.json``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from enfold.recall.rank import FEATURES, Model, RankModel, TreeModel, feature_matrix, fit_pairwise

#: Features whose growth can only raise an event's score in the trees (LightGBM's monotone
#: constraints): every signal of a match; not the opinion mark, whose sign depends on the
#: question, nor the place in time, which depends on what is asked.
_MONOTONE = {f: (0 if f in ("opinion", "recency", "recency_asked") else 1) for f in FEATURES}
#: LambdaMART's settings (chosen by leave-one-stream-out cross-validation on the fitted
#: streams, session 39: docs/benchmarks.md): small trees, a slow rate, bagging.
TREE_PARAMS: dict[str, Any] = {
    "objective": "lambdarank", "num_iterations": 60, "learning_rate": 0.15, "num_leaves": 7,
    "min_data_in_leaf": 50, "lambdarank_truncation_level": 20, "bagging_fraction": 0.8,
    "bagging_freq": 1, "feature_fraction": 0.8, "seed": 0, "deterministic": True,
    "force_row_wise": True, "num_threads": 1, "verbose": -1,
}


@dataclass
class Question:
    text: str
    at: datetime
    gold: frozenset[str]  # external ids of the evidence events
    group: str  # data set name (each weighs the same in the fit)
    category: str = ""


@dataclass
class Stream:
    """Events to ingest into one namespace, and the questions asked of them."""

    name: str
    events: list[dict[str, Any]]
    questions: list[Question]


def locomo_streams(path: Path, ids: Sequence[str] | None = None) -> list[Stream]:
    from enfold.bench.datasets import load_locomo
    from enfold.bench.locomo import CATEGORIES, turn_events

    out = []
    for conv in load_locomo(path):
        if ids is not None and conv.sample_id not in ids:
            continue
        asked = conv.turns[-1].ts + timedelta(days=1)
        qs = [Question(q.question, asked, frozenset(q.evidence), "locomo",
                       CATEGORIES[q.category])
              for q in conv.questions(CATEGORIES) if q.evidence]
        out.append(Stream(conv.sample_id, turn_events(conv), qs))
    return out


def personal_stream(path: Path) -> Stream:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    events = [{"text": e["text"], "ts": e["ts"], "source": e.get("source"), "id": e["id"]}
              for e in data["events"]]
    name = Path(path).stem
    # One group for every personal stream (together they weigh as much as LoCoMo in the
    # fit); the stream's name as the category, so each is reported on its own.
    qs = [Question(q["q"], datetime.fromisoformat(q["at"])
                   .astimezone(UTC), frozenset([q["answer"]]), "personal", name)
          for q in data["questions"]]
    return Stream(name, events, qs)


def collapse_streams(path: Path) -> list[Stream]:
    """The semantic-collapse probe's items (``bench collapse`` format), each its own stream
    of a fact and claims said an hour apart, asked as ``bench collapse`` asks: the answer to
    a factual query is the fact, to a query about a view the utterances of its holder's
    claims. One group for every item (together they weigh as much as LoCoMo); the file's
    name as the category."""
    from enfold.bench.datasets import load_collapse

    out = []
    start = 1_700_000_000
    for n, item in enumerate(load_collapse(path)):
        claims = [(f"claim{i}", c) for i, c in enumerate(item.claims)]
        said = [("fact", item.fact.text, item.fact.speaker),
                *((key, c.text, c.speaker) for key, c in claims)]
        events = [{"text": text, "ts": start + 3600 * i, "source": speaker, "id": key}
                  for i, (key, text, speaker) in enumerate(said)]
        asked = datetime.fromtimestamp(start + 3600 * len(said), tz=UTC)
        questions = []
        for q in item.queries:
            if q.expects == "fact":
                gold = frozenset({"fact"})
            else:
                gold = frozenset(key for key, c in claims
                                 if (c.holder or "").lower() == (q.holder or "").lower())
            if gold:
                questions.append(Question(q.q, asked, gold, "collapse", Path(path).stem))
        out.append(Stream(f"{Path(path).stem}:{n}", events, questions))
    return out


def _memory(stream: Stream, embedder: Any) -> Any:
    from enfold.memory import Memory
    from enfold.store import open_store
    from enfold.write.planner_local import LocalPlanner

    mem = Memory(open_store("memory:"), namespace="bench", embedder=embedder,
                 planners=[LocalPlanner(None, embedder)])
    mem.add_many(stream.events)
    return mem


def featurize(mem: Any, questions: Iterable[Question]
              ) -> list[tuple[Question, list[str], np.ndarray, np.ndarray]]:
    """Each question's candidates (external ids), features and labels, computed exactly as
    recall computes them."""
    from enfold.recall.analyze import analyze
    from enfold.recall.controller import _opinions, candidate_set, gather
    from enfold.write.people_index import PeopleIndex

    g = mem.graph(mem.namespace)
    out = []
    for q in questions:
        analysis = analyze(q.text, at=q.at, known_keys=PeopleIndex.of(g).asked())
        qvec = None
        if mem.embedder is not None:
            qvec = np.asarray(mem.embedder.embed([q.text])[0], dtype=np.float32)

        def lexical(text: str, kinds: Any, n: int) -> list[tuple[str, float]]:
            return list(mem.store.search_text(mem.namespace, text, kinds, n))

        sig, _, _ = gather(g, lexical, analysis, qvec, mem.settings,
                           weights=partial(mem.store.word_weights, mem.namespace))
        cands, near = candidate_set(g, sig, qvec, analysis, mem.settings)
        if not analysis.asks_opinion:
            sig.opinion = _opinions(g, cands)
        x = feature_matrix(cands, sig, near)
        ext = [str(g.nodes[e].attrs.get("external_id") or e) for e in cands]
        y = np.array([1.0 if i in q.gold else 0.0 for i in ext])
        out.append((q, ext, x, y))
    return out


def evaluate(rows: Sequence[tuple[Question, list[str], np.ndarray, np.ndarray]],
             model: Model, ks: Sequence[int] = (1, 3, 5, 10, 20)) -> dict[str, Any]:
    """Recall@k of the model's ranking (share of each question's evidence in its top k),
    overall and by data set / category."""
    per: dict[str, dict[int, list[float]]] = {}
    for q, ext, x, _ in rows:
        order = [ext[i] for i in np.argsort(-model.score(x), kind="stable")] if len(ext) else []
        for key in ("overall", q.group, f"{q.group}/{q.category}" if q.category else None):
            if key is None:
                continue
            row = per.setdefault(key, {k: [] for k in ks})
            for k in ks:
                row[k].append(len(q.gold & set(order[:k])) / len(q.gold))
    return {key: {f"recall@{k}": round(float(np.mean(v)), 4) for k, v in row.items()}
            | {"questions": len(next(iter(row.values())))}
            for key, row in sorted(per.items())}


def train(
    fit_streams: Sequence[Stream],
    measure_streams: Sequence[Stream],
    *,
    embedder: Any,
    l2: float = 1.0,
    progress: Callable[[str], None] | None = None,
    ablate: Sequence[str] = (),
    method: str = "trees",
) -> tuple[Model, dict[str, Any]]:
    """Fit the model on ``fit_streams``; measure on both parts. ``method``: ``trees``
    (LambdaMART, :data:`TREE_PARAMS`; needs LightGBM) or ``linear`` (weights by pairwise
    logistic regression, ``l2``). With ``ablate``, a second fit on the same candidates with
    those features zeroed is reported as ``without`` (what the features add, at fixed
    data)."""
    if method not in ("trees", "linear"):
        raise ValueError(f"unknown method {method!r}")
    fit_rows: list[Any] = []
    measure_rows: list[Any] = []
    for part, streams in ((fit_rows, fit_streams), (measure_rows, measure_streams)):
        for s in streams:
            mem = _memory(s, embedder)
            part.extend(featurize(mem, s.questions))
            mem.close()
            if progress is not None:
                progress(f"{s.name}: {len(s.events)} events, {len(s.questions)} questions")
    model, info = _fit(fit_rows, l2, method)
    report = {"fit": evaluate(fit_rows, model), "measure": evaluate(measure_rows, model),
              "fit_streams": [s.name for s in fit_streams],
              "measure_streams": [s.name for s in measure_streams],
              "optimizer": info, "embedder": getattr(embedder, "name", None)}
    if ablate:
        cols = [FEATURES.index(f) for f in ablate]

        def zeroed(rows: list[Any]) -> list[Any]:
            out = []
            for q, ext, x, y in rows:
                x = x.copy()
                x[:, cols] = 0.0
                out.append((q, ext, x, y))
            return out

        fit0, measure0 = zeroed(fit_rows), zeroed(measure_rows)
        m0, _ = _fit(fit0, l2, method)
        without = {"features": list(ablate), "fit": evaluate(fit0, m0),
                   "measure": evaluate(measure0, m0)}
        return _with_info(model, {"trained": report}), {**report, "without": without}
    return _with_info(model, {"trained": report}), report


def _with_info(model: Model, info: dict[str, Any]) -> Model:
    if isinstance(model, TreeModel):
        return TreeModel(model.feature, model.threshold, model.left, model.right, model.value,
                         model.depth, info)
    return RankModel(model.weights, info)


def _fit(rows: list[Any], l2: float, method: str = "trees") -> tuple[Model, dict[str, Any]]:
    if method == "trees":
        return _fit_trees(rows)
    weights, info = _fit_linear(rows, l2)
    return RankModel(weights), info


def _fit_trees(rows: list[Any]) -> tuple[TreeModel, dict[str, Any]]:
    """LambdaMART over each question's candidates (a question with no relevant candidate
    teaches nothing and is left out), each data set weighing the same."""
    try:
        import lightgbm
    except ImportError as exc:  # pragma: no cover - the dev extra installs it
        raise RuntimeError("fitting trees needs LightGBM: pip install lightgbm "
                           "(or --method linear)") from exc
    # Each data set weighs the same, as in the linear fit: a question's rows weigh the
    # largest set's count over its set's (LightGBM's ranking objectives weigh a query by
    # its rows' weight).
    counts: dict[str, int] = {}
    for q, _, _, y in rows:
        if len(y) and y.max() > 0:
            counts[q.group] = counts.get(q.group, 0) + 1
    xs, ys, sizes, weights = [], [], [], []
    for q, _, x, y in rows:
        if len(y) and y.max() > 0:
            xs.append(x)
            ys.append(y.astype(np.int64))
            sizes.append(len(y))
            weights.append(np.full(len(y), max(counts.values()) / counts[q.group]))
    if not xs:
        raise ValueError("no question with a relevant candidate")
    data = lightgbm.Dataset(np.vstack(xs), np.concatenate(ys), group=sizes,
                            weight=np.concatenate(weights), feature_name=list(FEATURES),
                            free_raw_data=False)
    booster = lightgbm.train({**TREE_PARAMS,
                              "monotone_constraints": [_MONOTONE[f] for f in FEATURES]}, data)
    model = TreeModel.from_lightgbm(booster.dump_model())
    return model, {"method": "lambdamart", "lightgbm": lightgbm.__version__,
                   "queries": len(xs), "per_set": counts, "trees": int(model.feature.shape[0]),
                   "params": {k: v for k, v in TREE_PARAMS.items() if k != "num_threads"}}


def _fit_linear(rows: list[Any], l2: float) -> tuple[tuple[float, ...], dict[str, Any]]:
    # Each data set weighs the same: a group's queries are repeated to the largest group's
    # size (by weighting its pairs), so LoCoMo's hundreds do not drown a personal stream.
    sizes: dict[str, int] = {}
    for q, *_ in rows:
        sizes[q.group] = sizes.get(q.group, 0) + 1
    biggest = max(sizes.values())
    groups = [(x, y) for q, _, x, y in rows for _ in range(
        max(1, round(biggest / sizes[q.group])))]
    return fit_pairwise(groups, l2=l2)


__all__ = ["FEATURES", "Question", "Stream", "collapse_streams", "evaluate", "featurize",
           "locomo_streams",
           "personal_stream", "train"]
