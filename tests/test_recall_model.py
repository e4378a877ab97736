"""Recall's ranking model (enfold.recall.rank): the trees evaluated with NumPy score exactly
as LightGBM's own prediction does, their JSON form round-trips, and the ``cover`` feature
(enfold.text.terms) gives a text the share of the question's weight of words it holds."""

from __future__ import annotations

import json

import numpy as np
import pytest

from enfold.recall.rank import (
    FEATURES,
    RankModel,
    TreeModel,
    model_from_dict,
    model_json,
    packaged_model,
    relative_scores,
)
from enfold.text.terms import QueryTerms, stem


def _booster(seed: int, trees: int = 60) -> tuple[object, np.ndarray]:
    try:
        import lightgbm
    except (ImportError, OSError) as exc:  # OSError: no OpenMP runtime (libgomp1)
        pytest.skip(f"LightGBM cannot load: {exc}")
    rng = np.random.default_rng(seed)
    n, width = 1200, len(FEATURES)
    x = rng.random((n, width))
    x[:, 3] = np.round(x[:, 3], 1)  # ties at the thresholds
    x[:, 7] = (x[:, 7] > 0.7).astype(float)  # a mark (0 or 1)
    x[:, 12] = 0.0  # a feature never split on
    y = (x[:, 0] + 0.5 * x[:, 2] * x[:, 7] - 0.3 * x[:, 14] + 0.2 * rng.random(n) > 0.9)
    data = lightgbm.Dataset(x, y.astype(int), group=[40] * (n // 40))
    params = {"objective": "lambdarank", "num_iterations": trees, "num_leaves": 7,
              "learning_rate": 0.1, "min_data_in_leaf": 5, "verbose": -1, "seed": seed,
              "deterministic": True, "num_threads": 1,
              "monotone_constraints": [1 if i < 6 else 0 for i in range(width)]}
    return lightgbm.train(params, data), x


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_trees_score_as_lightgbm_predicts(seed: int) -> None:
    booster, x = _booster(seed)
    model = TreeModel.from_lightgbm(booster.dump_model())  # type: ignore[attr-defined]
    fresh = np.random.default_rng(seed + 10).random((300, len(FEATURES)))
    for rows in (x, fresh, x[:1], x[:0]):
        want = booster.predict(rows) if len(rows) else np.zeros(0)  # type: ignore[attr-defined]
        assert np.allclose(model.score(rows), want, rtol=0, atol=1e-9)
    # the JSON form scores the same
    again = model_from_dict(json.loads(json.dumps(model.to_dict())))
    assert isinstance(again, TreeModel)
    assert np.array_equal(again.score(fresh), model.score(fresh))
    # the depth walked comes from the trees, not from the file's word for it
    shallow = model_from_dict(dict(model.to_dict(), depth=1))
    assert np.array_equal(shallow.score(fresh), model.score(fresh))


def test_a_model_fitted_on_fewer_features_loads_and_an_unknown_one_is_refused() -> None:
    booster, x = _booster(3, trees=10)
    d = TreeModel.from_lightgbm(booster.dump_model()).to_dict()  # type: ignore[attr-defined]
    # a model written before the last feature existed: its columns by name
    older = dict(d, features=list(FEATURES[:-1]))
    if any(len(FEATURES) - 1 in t["feature"] for t in d["trees"]):
        pytest.skip("this model splits on the last feature")
    loaded = model_from_dict(older)
    assert np.allclose(loaded.score(x), model_from_dict(d).score(x))
    with pytest.raises(ValueError, match="unknown features"):
        model_from_dict(dict(d, features=[*FEATURES[:-1], "gone"]))
    # weights without the newest feature weigh it 0
    linear = model_from_dict({"weights": {"lex": 2.0}})
    assert isinstance(linear, RankModel) and linear.weights[FEATURES.index("cover")] == 0.0


def test_the_packaged_model_scores_every_feature_row() -> None:
    model = packaged_model()
    x = np.random.default_rng(0).random((50, len(FEATURES)))
    s = model.score(x)
    assert s.shape == (50,) and np.isfinite(s).all() and len(set(s.round(9))) > 1


def test_relative_scores_are_odds_against_the_best() -> None:
    raw = np.array([2.0, -1.0, 2.0 - np.log(4.0), 0.5])
    rel = relative_scores(raw)
    assert rel[0] == 1.0 and np.allclose(rel[2], 0.25)
    assert list(np.argsort(-rel, kind="stable")) == list(np.argsort(-raw, kind="stable"))
    assert (rel > 0).all() and len(relative_scores(np.zeros(0))) == 0


def test_cover_is_the_share_of_the_question_weight_a_text_holds() -> None:
    terms = QueryTerms(["size", "new", "trainers"], {"size": 1.0, "new": 0.5, "trainers": 2.5})
    assert terms.cover("Receipt: new Trainers, UK 6.5") == pytest.approx(3.0 / 4.0)
    assert terms.cover("Ordered navy scrubs (size S)") == pytest.approx(1.0 / 4.0)
    assert terms.cover("a trainer's bag") == pytest.approx(2.5 / 4.0)  # one stem
    assert terms.cover("restrained") == 0.0  # "trainers" inside a word is not it
    assert terms.cover("") == 0.0
    # a word of no weight (a stop word of the backend) counts for nothing either way
    stop = QueryTerms(["the", "delivery"], {"the": 0.0, "delivery": 1.0})
    assert stop.cover("the deliveries came") == 1.0 and stop.cover("the end") == 0.0
    assert stem("deliveries") == stem("delivery")
    # a stem that shares few letters with its word ("fli" of "fly") still finds its forms
    fly = QueryTerms(["fly", "dying"], {"fly": 1.0, "dying": 1.0})
    assert fly.cover("the flies are back") == 0.5 and fly.cover("it will die") == 0.5
    assert not QueryTerms([], {}) and QueryTerms([], {}).cover("anything") == 0.0


def test_the_model_file_form_reads_back_as_the_model() -> None:
    booster, x = _booster(4, trees=5)
    model = TreeModel.from_lightgbm(booster.dump_model(),  # type: ignore[attr-defined]
                                    {"trained": {"note": "x"}})
    text = model_json(model)
    assert json.loads(text) == model.to_dict() and text.count("\n") < 60
    assert np.array_equal(model_from_dict(json.loads(text)).score(x), model.score(x))
    linear = RankModel(tuple(float(i) for i in range(len(FEATURES))))
    assert model_from_dict(json.loads(model_json(linear))).score(x[:3]).tolist() == \
        linear.score(x[:3]).tolist()
