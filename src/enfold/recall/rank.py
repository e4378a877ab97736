"""Ranking evidence events by calibrated scores, not by ranks alone.

Reciprocal-rank fusion adds a flat bonus for every list an event appears in, so an event
that sits in a large concept outranks the one event that holds a rare word of the question:
on a personal stream, "Who has my foam roller?" returned ten turns about shifts and running,
all grounded by concepts, above the only turn that names the roller. Here every signal keeps
its size instead:

* ``lex`` — the event's BM25 score over the best BM25 score of the query (1 for the best
  lexical match, near 0 for a match on a common word), and ``lex_rr``, its reciprocal rank;
* ``dense`` — the event's cosine to the query, rescaled between the cosine at rank
  ``Settings.dense_floor_rank`` (0) and the best cosine (1), and ``dense_rr``;
* ``ground`` / ``person`` / ``claim`` — the graph operators' scores (events grounding the
  concepts, facts and claims that anchor on the query; events reached from the people the
  question names; the utterances behind the asked holder's claims), each over its best;
* ``speaker`` — the event was said by a person the question names;
* ``nb1_*`` / ``nb2_*`` — the best lexical and dense score among the turns one and two
  places away in the log: an answer often sits next to the words it shares with the
  question;
* ``opinion`` — the event is the utterance of a claim and the question is not about a view;
* ``window`` — the question names a time, and the event happened in it or mentions it (the
  temporal gate, as a signal: "Am I still doing the race in May?", asked in April, is
  answered by a note from March that speaks of May);
* ``answer`` — the question asks for a kind of thing (a person, a time, a sum of money,
  another number: "Who has my ladder?", "When is the dentist?", "How much was the
  electricity?", "What's the gate code?") and the event holds one: it names a person,
  mentions a time, states a sum or a number;
* ``passage`` — the best cosine of the event's whole text and its passages (a long text's
  sentences and each two side by side, :mod:`enfold.text.passages`), rescaled as ``dense``:
  the line of a long email that answers the question, which the whole text's vector
  dilutes (for a short text, the same as ``dense``);
* ``cover`` — for a BM25 hit, the share of the question's words, each weighed by its
  inverse document frequency, that the event holds (:mod:`enfold.text.terms`): unlike
  ``lex``, not relative to the best match, so a best match on one common word of the
  question scores low;
* ``recency`` — where the event's time falls between the oldest (0) and the newest (1)
  candidate, and ``recency_asked``, the same when the question asks for the current state
  or the latest time ("Who has my ladder?", "When did I last ..."): the newest evidence wins
  a change of state.

An event's score is a sum of small regression trees over its features (LambdaMART,
:class:`TreeModel`), fitted by ``enfold bench train-recall`` with LightGBM on labelled
questions — LoCoMo conversations and hand-written personal streams — and recorded with the
data, the split and the measured numbers in ``enfold/data/recall_model.json``; recall
evaluates the trees with NumPy. Trees, not weights, because what a signal is worth depends
on the others: a lexical match on a fraction of the question (``cover``) matters when the
dense match is weak and little when it is strong, and the linear weights this replaced
(:class:`RankModel`, still read from a file that holds weights) lost top-1 answers to a
flat dense ranking on personal streams (session 38). Every signal of a match may only
raise a score (monotone constraints), so an event holding more of the question never
ranks lower for it. All features are relative to the query's own best scores or shares of
the query, so the same model serves any embedder.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from itertools import chain, repeat
from typing import Any

import numpy as np

from enfold.settings import Settings
from enfold.text.terms import QueryTerms

FEATURES = ("lex", "lex_rr", "dense", "dense_rr", "ground", "person", "claim", "speaker",
            "nb1_lex", "nb1_dense", "nb2_lex", "nb2_dense", "opinion", "window", "recency",
            "recency_asked", "answer", "passage", "cover")
_COL = {name: i for i, name in enumerate(FEATURES)}
DENSE_FLOOR_RANK: int = Settings.dense_floor_rank  # its default: the cosine at this rank scores 0
MODEL_FILE = "recall_model.json"


@dataclass
class Signals:
    """What the operators found for one query, before ranking (event id → raw score)."""

    lex: dict[str, float] = field(default_factory=dict)  # BM25, higher is better
    dense: dict[str, float] = field(default_factory=dict)  # cosine
    dense_floor: float = 0.0  # the cosine at dense_floor_rank (or the last one found)
    dense_hits: set[str] = field(default_factory=set)  # found by the dense search itself
    passage: dict[str, float] = field(default_factory=dict)  # best passage cosine (long events)
    ground: dict[str, float] = field(default_factory=dict)
    person: dict[str, float] = field(default_factory=dict)
    claim: dict[str, float] = field(default_factory=dict)
    speaker: set[str] = field(default_factory=set)
    opinion: set[str] = field(default_factory=set)  # claim utterances (factual questions)
    window: set[str] = field(default_factory=set)  # of the time the question names
    answer: set[str] = field(default_factory=set)  # hold a thing of the asked kind
    ts: dict[str, float] = field(default_factory=dict)  # each candidate's time
    asks_latest: bool = False  # the question is about the current state or the latest time
    terms: QueryTerms | None = None  # the query's words and their weights
    cover: dict[str, float] = field(default_factory=dict)  # share of their weight held


def _over_best(scores: Mapping[str, float]) -> dict[str, float]:
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {}
    return {i: max(0.0, s) / top for i, s in scores.items()}


def _reciprocal_ranks(scores: Mapping[str, float]) -> dict[str, float]:
    order = sorted(scores, key=lambda x: (-scores[x], x))
    return {i: 1.0 / r for r, i in enumerate(order, 1)}


def _over_best_array(scores: Mapping[str, float]) -> dict[str, float]:
    """:func:`_over_best` over an array of the values (the same divisions)."""
    top = max(scores.values(), default=0.0)
    if top <= 0:
        return {}
    v = np.fromiter(scores.values(), np.float64, len(scores))
    return dict(zip(scores, (np.maximum(v, 0.0) / top).tolist(), strict=True))


def _reciprocal_ranks_sorted(scores: Mapping[str, float]) -> dict[str, float]:
    """:func:`_reciprocal_ranks` by two sorts in C (ids, then scores, stable and reversed:
    best first, ties by id) instead of a key function per id."""
    order = sorted(sorted(scores), key=scores.__getitem__, reverse=True)
    return dict(zip(order, (1.0 / np.arange(1, len(order) + 1, dtype=np.float64)).tolist(),
                    strict=True))


def _rescaled(cosines: Mapping[str, float], floor: float) -> dict[str, float]:
    """Cosines between ``floor`` (0) and their best (1), clipped."""
    top = max(cosines.values(), default=0.0)
    span = top - floor
    if span <= 1e-9 or not cosines:
        return {}
    v = np.fromiter(cosines.values(), np.float64, len(cosines))
    scaled = np.minimum(np.maximum((v - floor) / span, 0.0), 1.0)
    return dict(zip(cosines, scaled.tolist(), strict=True))


def _best_passage(sig: Signals) -> dict[str, float]:
    """Each event's best cosine of its whole text and its passages."""
    if not sig.passage:
        return dict(sig.dense)
    best = dict(sig.dense)
    for e, c in sig.passage.items():
        if c > best.get(e, -2.0):
            best[e] = c
    return best


def _relative(sig: Signals) -> tuple[dict[str, float], ...]:
    """Each signal over the query's best (see the module docstring): lex, lex_rr, dense,
    dense_rr, ground, person, claim, passage."""
    return (_over_best_array(sig.lex), _reciprocal_ranks_sorted(sig.lex),
            _rescaled(sig.dense, sig.dense_floor), _reciprocal_ranks_sorted(sig.dense),
            _over_best_array(sig.ground), _over_best_array(sig.person),
            _over_best_array(sig.claim), _rescaled(_best_passage(sig), sig.dense_floor))


def feature_matrix(
    candidates: list[str],
    sig: Signals,
    neighbours: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]],
) -> np.ndarray:
    """One row of :data:`FEATURES` per candidate. ``neighbours[e]`` holds the ids one and two
    places away from ``e`` in the log.

    Column by column over the candidates (a query has some hundreds), each signal's
    relative scores by array arithmetic and looked up by ``map`` (no Python frame per
    candidate), the neighbours' best scores by one gather over an index of their rows; the
    same values as :func:`feature_matrix_reference` (every score is at least 0, so a
    missing neighbour's 0 changes no maximum)."""
    n = len(candidates)
    lex, lex_rr, dense, dense_rr, ground, person, claim, passage = _relative(sig)
    x = np.zeros((n, len(FEATURES)), dtype=np.float64)
    if n == 0:
        return x
    for name, values in (("lex", lex), ("lex_rr", lex_rr), ("dense", dense),
                         ("dense_rr", dense_rr), ("ground", ground), ("person", person),
                         ("claim", claim), ("passage", passage), ("cover", sig.cover)):
        if values:
            x[:, _COL[name]] = np.fromiter(map(values.get, candidates, repeat(0.0, n)),
                                           np.float64, n)
    for name, members in (("speaker", sig.speaker), ("opinion", sig.opinion),
                          ("window", sig.window), ("answer", sig.answer)):
        if members:
            x[:, _COL[name]] = np.fromiter(map(members.__contains__, candidates),
                                           np.float64, n)
    # The turns one and two places away, as rows of the candidates and of the neighbours
    # that are not candidates; row `len(ids)` is a neighbour that is not there (0).
    empty: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())
    near = list(map(neighbours.get, candidates, repeat(empty, n)))
    width = max((len(t) for pair in near for t in pair), default=0)
    if width:
        ids = list(dict.fromkeys(chain(candidates, (e for pair in near for t in pair
                                                    for e in t))))
        row = dict(zip(ids, range(len(ids))))
        absent = len(ids)
        at = np.full((2, n, width), absent, dtype=np.int64)
        for place in (0, 1):
            for k in range(width):
                at[place, :, k] = np.fromiter(
                    (row[pair[place][k]] if len(pair[place]) > k else absent
                     for pair in near), np.int64, n)
        for name, values in (("lex", lex), ("dense", dense)):
            if not values:
                continue
            v = np.zeros(len(ids) + 1, dtype=np.float64)
            v[:len(ids)] = np.fromiter(map(values.get, ids, repeat(0.0, len(ids))),
                                       np.float64, len(ids))
            x[:, _COL[f"nb1_{name}"]] = v[at[0]].max(axis=1)
            x[:, _COL[f"nb2_{name}"]] = v[at[1]].max(axis=1)
    ts = sig.ts
    times = np.fromiter(map(ts.get, candidates, repeat(0.0, n)), np.float64, n)
    first, last = float(times.min()), float(times.max())
    if last > first:
        own = np.fromiter(map(ts.get, candidates, repeat(first, n)), np.float64, n)
        x[:, _COL["recency"]] = (own - first) / (last - first)
        if sig.asks_latest:
            x[:, _COL["recency_asked"]] = x[:, _COL["recency"]]
    return x


def feature_matrix_reference(
    candidates: list[str],
    sig: Signals,
    neighbours: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]],
) -> np.ndarray:
    """:func:`feature_matrix` one candidate at a time: the reference it equals."""
    lex = _over_best(sig.lex)
    lex_rr = _reciprocal_ranks(sig.lex)
    top = max(sig.dense.values(), default=0.0)
    span = top - sig.dense_floor
    floor = sig.dense_floor
    dense = ({i: min(max((c - floor) / span, 0.0), 1.0) for i, c in sig.dense.items()}
             if span > 1e-9 else {})
    dense_rr = _reciprocal_ranks(sig.dense)
    ground, person, claim = _over_best(sig.ground), _over_best(sig.person), _over_best(sig.claim)
    best = {e: max(c, sig.passage.get(e, c)) for e, c in sig.dense.items()}
    best.update((e, c) for e, c in sig.passage.items() if e not in best)
    ptop = max(best.values(), default=0.0)
    passage = ({i: min(max((c - floor) / (ptop - floor), 0.0), 1.0) for i, c in best.items()}
               if ptop - floor > 1e-9 else {})
    times = [sig.ts.get(e, 0.0) for e in candidates]
    first, last = min(times, default=0.0), max(times, default=0.0)
    rows: list[tuple[float, ...]] = []
    for e in candidates:
        recency = (sig.ts.get(e, first) - first) / (last - first) if last > first else 0.0
        one, two = neighbours.get(e, ((), ()))
        rows.append((
            lex.get(e, 0.0), lex_rr.get(e, 0.0), dense.get(e, 0.0), dense_rr.get(e, 0.0),
            ground.get(e, 0.0), person.get(e, 0.0), claim.get(e, 0.0),
            1.0 if e in sig.speaker else 0.0,
            max((lex.get(n, 0.0) for n in one), default=0.0),
            max((dense.get(n, 0.0) for n in one), default=0.0),
            max((lex.get(n, 0.0) for n in two), default=0.0),
            max((dense.get(n, 0.0) for n in two), default=0.0),
            1.0 if e in sig.opinion else 0.0,
            1.0 if e in sig.window else 0.0,
            recency,
            recency if sig.asks_latest else 0.0,
            1.0 if e in sig.answer else 0.0,
            passage.get(e, 0.0),
            sig.cover.get(e, 0.0),
        ))
    return np.array(rows, dtype=np.float64).reshape(len(candidates), len(FEATURES))


@dataclass(frozen=True)
class RankModel:
    """Linear weights over :data:`FEATURES`."""

    weights: tuple[float, ...]
    info: Mapping[str, Any] = field(default_factory=dict)

    def score(self, x: np.ndarray) -> np.ndarray:
        return x @ np.asarray(self.weights, dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "weights": dict(zip(FEATURES, self.weights,
                                                                 strict=True)),
                **dict(self.info)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> RankModel:
        w = d["weights"]
        return cls(tuple(float(w.get(f, 0.0)) for f in FEATURES),
                   {k: v for k, v in d.items() if k not in ("features", "weights")})


#: Used when no trained model is packaged: BM25 first, the rest as tie-breakers.
FALLBACK = RankModel((1.0, 0.2, 0.5, 0.1, 0.3, 0.2, 0.3, 0.1, 0.1, 0.1, 0.05, 0.05, -0.1,
                      0.5, 0.0, 0.2, 0.3, 0.0, 0.5))


@dataclass(frozen=True)
class TreeModel:
    """A sum of regression trees over :data:`FEATURES` (LambdaMART, fitted by LightGBM in
    ``enfold bench train-recall``), evaluated here with NumPy from the trees' JSON.

    Each tree is flat arrays over its nodes: the feature a node splits on (-1 at a leaf),
    the threshold (a row goes left when its value is at most it, as LightGBM's ``<=``
    splits do), the left and right child (a leaf is its own child) and the value (a leaf's
    output). All trees are padded to the same number of nodes and walked together, one
    level at a time for every candidate: as many NumPy steps as the deepest tree is deep,
    not one per tree or per candidate. The features hold no missing values (every feature
    is a number), so a split's missing-value direction never applies."""

    feature: np.ndarray  # (trees, nodes) int64
    threshold: np.ndarray  # (trees, nodes) float64
    left: np.ndarray  # (trees, nodes) int64
    right: np.ndarray  # (trees, nodes) int64
    value: np.ndarray  # (trees, nodes) float64
    depth: int
    info: Mapping[str, Any] = field(default_factory=dict)
    _feat: np.ndarray = field(init=False, repr=False, compare=False)
    _thr: np.ndarray = field(init=False, repr=False, compare=False)
    _left: np.ndarray = field(init=False, repr=False, compare=False)
    _right: np.ndarray = field(init=False, repr=False, compare=False)
    _value: np.ndarray = field(init=False, repr=False, compare=False)
    _roots: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # The nodes of all trees as one array each, children as indexes into them, and a
        # leaf's feature as 0 (it is its own child, so its test changes nothing).
        trees, width = self.feature.shape
        base = (np.arange(trees, dtype=np.int64) * width)[:, None]
        flat = {"_feat": np.maximum(self.feature, 0).ravel(),
                "_thr": self.threshold.ravel().astype(np.float64),
                "_left": (self.left + base).ravel(), "_right": (self.right + base).ravel(),
                "_value": self.value.ravel().astype(np.float64),
                "_roots": base.ravel()}
        for name, array in flat.items():
            object.__setattr__(self, name, array)

    def score(self, x: np.ndarray) -> np.ndarray:
        n, trees = x.shape[0], self.feature.shape[0]
        if n == 0 or trees == 0:
            return np.zeros(n, dtype=np.float64)
        width = x.shape[1]
        cells = np.ascontiguousarray(x, dtype=np.float64).ravel()
        rows = (np.arange(n, dtype=np.int64) * width)[:, None]
        at = np.broadcast_to(self._roots, (n, trees)).copy()
        for _ in range(self.depth):
            go_left = cells.take(rows + self._feat.take(at)) <= self._thr.take(at)
            at = np.where(go_left, self._left.take(at), self._right.take(at))
        return np.asarray(self._value.take(at).sum(axis=1), dtype=np.float64)

    def to_dict(self) -> dict[str, Any]:
        return {"features": list(FEATURES), "kind": "trees", "depth": self.depth,
                "trees": [{"feature": self.feature[i].tolist(),
                           "threshold": self.threshold[i].tolist(),
                           "left": self.left[i].tolist(), "right": self.right[i].tolist(),
                           "value": self.value[i].tolist()}
                          for i in range(self.feature.shape[0])],
                **dict(self.info)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TreeModel:
        """From :meth:`to_dict`'s form; a feature the model was fitted with that
        :data:`FEATURES` no longer has is an error, one it lacks is never split on."""
        names = list(d["features"])
        unknown = set(names) - set(FEATURES)
        if unknown:
            raise ValueError(f"the ranking model splits on unknown features: {sorted(unknown)}")
        remap = np.array([FEATURES.index(f) for f in names], dtype=np.int64)
        trees = d["trees"]
        width = max((len(tr["feature"]) for tr in trees), default=1)

        def padded(key: str, fill: float, dtype: Any) -> np.ndarray:
            out = np.full((len(trees), width), fill, dtype=dtype)
            for i, tr in enumerate(trees):
                out[i, :len(tr[key])] = tr[key]
            return out

        feature = padded("feature", -1, np.int64)
        feature = np.where(feature >= 0, remap[np.maximum(feature, 0)], -1)
        left, right = padded("left", 0, np.int64), padded("right", 0, np.int64)
        return cls(feature, padded("threshold", 0.0, np.float64), left, right,
                   padded("value", 0.0, np.float64), _depth(feature, left, right),
                   {k: v for k, v in d.items()
                    if k not in ("features", "kind", "depth", "trees")})

    @classmethod
    def from_lightgbm(cls, dump: Mapping[str, Any], info: Mapping[str, Any] | None = None,
                      ) -> TreeModel:
        """From LightGBM's ``Booster.dump_model()`` of a model fitted on :data:`FEATURES`'
        columns in order."""
        flat: list[dict[str, list[Any]]] = []
        depth = 0
        for tree in dump["tree_info"]:
            nodes: dict[str, list[Any]] = {k: [] for k in ("feature", "threshold", "left",
                                                           "right", "value")}

            def add(node: Mapping[str, Any], level: int, nodes: dict[str, list[Any]] = nodes,
                    ) -> int:
                nonlocal depth
                i = len(nodes["feature"])
                for column in nodes.values():
                    column.append(0)
                if "leaf_value" in node or "split_feature" not in node:
                    depth = max(depth, level)
                    nodes["feature"][i], nodes["left"][i], nodes["right"][i] = -1, i, i
                    nodes["value"][i] = float(node.get("leaf_value", 0.0))
                    return i
                if node.get("decision_type", "<=") != "<=":
                    raise ValueError("only '<=' splits are supported")
                nodes["feature"][i] = int(node["split_feature"])
                nodes["threshold"][i] = float(node["threshold"])
                nodes["left"][i] = add(node["left_child"], level + 1)
                nodes["right"][i] = add(node["right_child"], level + 1)
                return i

            add(tree["tree_structure"], 0)
            flat.append(nodes)
        return cls.from_dict({"features": list(FEATURES), "depth": depth, "trees": flat,
                              **dict(info or {})})


def _depth(feature: np.ndarray, left: np.ndarray, right: np.ndarray) -> int:
    """The deepest leaf's level over all trees, from their structure (not from a file's
    word: a walk that stops early scores wrong)."""
    deepest = 0
    for t in range(feature.shape[0]):
        level, frontier = 0, [0]
        while frontier:
            inner = [i for i in frontier if feature[t, i] >= 0]
            if not inner:
                break
            level += 1
            if level > feature.shape[1]:
                raise ValueError("a tree of the ranking model has a cycle")
            frontier = [int(c) for i in inner for c in (left[t, i], right[t, i])]
        deepest = max(deepest, level)
    return deepest


Model = RankModel | TreeModel


def model_json(model: Model) -> str:
    """The model's JSON as ``enfold/data/recall_model.json`` holds it: indented, and each
    tree on one line (some hundreds of trees of a dozen nodes)."""
    d = model.to_dict()
    trees = d.pop("trees", None)
    text = json.dumps(d, indent=2, sort_keys=True)
    if trees is None:
        return text + "\n"
    lines = ",\n".join("    " + json.dumps(t, sort_keys=True) for t in trees)
    return text[:-2] + ',\n  "trees": [\n' + lines + "\n  ]\n}\n"


def model_from_dict(d: Mapping[str, Any]) -> Model:
    """A ranking model from its JSON form: trees when it says so, weights otherwise."""
    return TreeModel.from_dict(d) if d.get("kind") == "trees" else RankModel.from_dict(d)


def relative_scores(raw: np.ndarray) -> np.ndarray:
    """A query's candidates' model scores as ``exp(score - best)``: 1 for the best, less
    the further behind (both models are fitted on pairwise preferences, so a difference of
    scores reads like a log-odds, though LambdaMART's are weighted by rank and not
    calibrated odds), so that a share of the best's score (``Settings.facts_first_margin``)
    means the same whatever the scores' offset, and no score is negative."""
    if not len(raw):
        return raw.astype(np.float64)
    return np.asarray(np.exp(raw - raw.max()), dtype=np.float64)


@cache
def packaged_model() -> Model:
    """The model recorded in ``enfold/data/recall_model.json`` (see the module doc)."""
    try:
        text = (resources.files("enfold") / "data" / MODEL_FILE).read_text(encoding="utf-8")
    except FileNotFoundError:
        return FALLBACK
    return model_from_dict(json.loads(text))


def fit_pairwise(groups: Iterable[tuple[np.ndarray, np.ndarray]], *, l2: float = 1.0,
                 max_pairs: int = 400, seed: int = 0) -> tuple[tuple[float, ...], dict[str, Any]]:
    """Weights minimizing the pairwise logistic loss: for each query, every (relevant,
    irrelevant) candidate pair should score relevant higher. ``groups`` yields one query's
    ``(X, labels)``; each query gives at most ``max_pairs`` pairs (sampled), so that no
    query with many candidates weighs more than another. L2-regularized; L-BFGS."""
    from scipy.optimize import minimize

    rng = np.random.default_rng(seed)
    diffs: list[np.ndarray] = []
    weights: list[np.ndarray] = []  # each query's pairs weigh 1 in all
    for x, y in groups:
        pos, neg = np.flatnonzero(y > 0), np.flatnonzero(y <= 0)
        if not len(pos) or not len(neg):
            continue
        pairs = np.array([(p, n) for p in pos for n in neg])
        if len(pairs) > max_pairs:
            pairs = pairs[rng.choice(len(pairs), max_pairs, replace=False)]
        diffs.append(x[pairs[:, 0]] - x[pairs[:, 1]])
        weights.append(np.full(len(pairs), 1.0 / len(pairs)))
    if not diffs:
        raise ValueError("no query with both relevant and irrelevant candidates")
    queries = len(diffs)
    d_all, w_pair = np.concatenate(diffs), np.concatenate(weights)

    def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
        m = d_all @ w
        # log(1 + e^-m), stable
        lv = np.logaddexp(0.0, -m)
        g = -(w_pair * (1.0 / (1.0 + np.exp(m))))[:, None] * d_all
        total = float((w_pair * lv).sum() / queries + 0.5 * l2 * (w @ w) / queries)
        grad = g.sum(axis=0) / queries + l2 * w / queries
        return total, grad

    res = minimize(loss, np.zeros(d_all.shape[1]), jac=True, method="L-BFGS-B")
    return tuple(float(v) for v in res.x), {"queries": queries, "pairs": len(d_all),
                                            "loss": round(float(res.fun), 5), "l2": l2}
