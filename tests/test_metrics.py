"""Benchmark metrics on toy inputs whose answers are worked out by hand in the comments."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from enfold.bench.metrics import (
    Edge,
    chain_discovery,
    clustering_coefficient,
    compression,
    edge_type_entropy,
    gini,
    gold_f1,
    gold_f1_sensitivity,
    modularity,
    normalize_answer,
    percentiles,
    proactivity,
    purity,
    recall_at_k,
    token_f1,
)
from enfold.errors import InputError


def unit(deg: float) -> list[float]:
    """A unit vector in the plane at ``deg`` degrees: cos(u, v) = cos(angle between them)."""
    r = math.radians(deg)
    return [math.cos(r), math.sin(r)]


# ------------------------------------------------------------------ Gold F1
def test_gold_f1_hungarian_beats_greedy() -> None:
    # gold X at 0°, Y at 40°; system A at -25°, B at 18°.
    #   cos(A,X)=cos25=.906  cos(A,Y)=cos65=.423
    #   cos(B,X)=cos18=.951  cos(B,Y)=cos22=.927
    # Greedy takes the best pair B–X first and is left with A–Y (.423 < .75): 1 match.
    # The optimal one-to-one assignment is A–X + B–Y: 2 matches, P = R = F1 = 1.
    system = np.array([unit(-25), unit(18)])
    gold = np.array([unit(0), unit(40)])
    res = gold_f1(system, gold)
    assert res["precision"] == pytest.approx(1.0)
    assert res["recall"] == pytest.approx(1.0)
    assert res["f1"] == pytest.approx(1.0)
    assert [(i, j) for i, j, _ in res["matches"]] == [(0, 0), (1, 1)]
    assert res["matches"][0][2] == pytest.approx(math.cos(math.radians(25)))
    assert res["matches"][1][2] == pytest.approx(math.cos(math.radians(22)))


def test_gold_f1_threshold_and_counts() -> None:
    # 3 system concepts, 2 gold (X at 0°, Y at 90°): A matches X exactly; B is 40° from X
    # (cos .766, but X is better spent on A) and 50° from Y (cos .643); C is unrelated.
    system = np.array([unit(0), unit(40), unit(180)])
    gold = np.array([unit(0), unit(90)])
    res = gold_f1(system, gold, threshold=0.75)
    assert [(i, j) for i, j, _ in res["matches"]] == [(0, 0)]
    assert res["precision"] == pytest.approx(1 / 3)
    assert res["recall"] == pytest.approx(1 / 2)
    assert res["f1"] == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    # at 0.6 the B–Y pair (.643) counts too
    assert gold_f1(system, gold, threshold=0.6)["recall"] == pytest.approx(1.0)


def test_gold_f1_empty_and_mismatched() -> None:
    assert gold_f1(np.zeros((0, 2)), np.array([unit(0)]))["f1"] == 0.0
    assert gold_f1(np.array([unit(0)]), np.zeros((0, 2)))["f1"] == 0.0
    with pytest.raises(InputError):
        gold_f1(np.ones((2, 3)), np.ones((2, 4)))


def test_gold_f1_sensitivity_is_monotone() -> None:
    rng = np.random.default_rng(0)
    system, gold = rng.normal(size=(8, 16)), rng.normal(size=(6, 16))
    gold[:3] = system[:3] + 0.3 * rng.normal(size=(3, 16))
    sens = gold_f1_sensitivity(system, gold)
    assert list(sens) == [0.5, 0.6, 0.7, 0.75, 0.8, 0.9]
    counts = [sens[t]["n_matches"] for t in sens]
    assert counts == sorted(counts, reverse=True)
    assert sens[0.75]["f1"] == pytest.approx(gold_f1(system, gold)["f1"])


# ------------------------------------------------------------------ Purity
def test_purity() -> None:
    # group 1: e1, e1, e2 → pair cosines 1, 0, 0 → 1/3
    # group 2: e1, -e1 → -1
    # group 3: a single event → excluded
    groups = [
        np.array([[1.0, 0.0], [2.0, 0.0], [0.0, 1.0]]),
        np.array([[1.0, 0.0], [-1.0, 0.0]]),
        np.array([[1.0, 0.0]]),
    ]
    assert purity(groups) == pytest.approx((1 / 3 - 1) / 2)
    assert purity([np.array([[1.0, 0.0]])]) == 0.0
    assert purity([]) == 0.0


# ------------------------------------------------------------------ topology
def test_chain_discovery() -> None:
    edges = [("a", "b"), ("b", "c"), ("d", "e")]
    chains = [
        ["a", "x", "c"],  # a–b–c: connected (intermediate ids need not be on the path)
        ["c", "a"],  # edges point a→b→c; the path is undirected: connected
        ["a", "e"],  # different components
        ["a", "zz"],  # endpoint not in the graph
        ["a"],  # no endpoints to connect: left out
    ]
    assert chain_discovery(edges, chains) == pytest.approx(2 / 4)
    assert chain_discovery(edges, []) == 0.0


def test_clustering_triangle_plus_pendant() -> None:
    # a, b, c form a triangle; d hangs off c.
    # C(a) = C(b) = 1; C(c): neighbours a, b, d → 3 pairs, 1 linked (a–b) → 1/3; C(d) = 0.
    # average = (1 + 1 + 1/3 + 0) / 4 = 7/12
    edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")]
    assert clustering_coefficient(edges) == pytest.approx(7 / 12)
    # parallel edges, reversed duplicates and self-loops change nothing
    noisy: list[Edge] = [*edges, ("b", "a"), ("a", "b", 0.3), ("d", "d")]
    assert clustering_coefficient(noisy) == pytest.approx(7 / 12)
    # averaging over a subset, including a node absent from the graph (counts 0)
    assert clustering_coefficient(edges, nodes=["a", "c", "zz"]) == pytest.approx(
        (1 + 1 / 3 + 0) / 3)
    assert clustering_coefficient([]) == 0.0


def test_modularity_two_triangles() -> None:
    # Triangles {0,1,2} and {3,4,5} joined by the edge 2–3: m = 7 edges.
    # Degrees: 2,2,3 | 3,2,2 → each community has d_c = 7 and L_c = 3 internal edges.
    # Q = 2 · (3/7 − (7/14)²) = 6/7 − 1/2 = 5/14 ≈ 0.3571
    edges = [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3), (2, 3)]
    assert modularity(edges, [{0, 1, 2}, {3, 4, 5}]) == pytest.approx(5 / 14)
    # one community holding everything: Q = 7/7 − 1 = 0
    assert modularity(edges, [set(range(6))]) == pytest.approx(0.0)
    with pytest.raises(InputError):
        modularity(edges, [{0, 1, 2}, {3, 4}])  # 5 is in no community
    with pytest.raises(InputError):
        modularity(edges, [{0, 1, 2, 3}, {3, 4, 5}])  # 3 twice
    assert modularity([], [{0}]) == 0.0


def test_topology_matches_networkx() -> None:
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(7)
    g = nx.gnm_random_graph(30, 70, seed=3)
    for u, v in g.edges:
        g[u][v]["weight"] = float(rng.uniform(0.1, 1.0))
    edges = [(u, v, d["weight"]) for u, v, d in g.edges(data=True)]
    comms = [set(c) for c in nx.community.greedy_modularity_communities(g)]
    assert modularity(edges, comms) == pytest.approx(nx.community.modularity(g, comms))
    assert modularity([(u, v) for u, v, _ in edges], comms) == pytest.approx(
        nx.community.modularity(g, comms, weight=None))
    assert clustering_coefficient(edges, nodes=g.nodes) == pytest.approx(
        nx.average_clustering(g))


# ------------------------------------------------------------------ entropy, Track C
def test_edge_type_entropy() -> None:
    assert edge_type_entropy(["GROUNDS", "CAUSES", "TRIGGERS", "PART_OF"]) == pytest.approx(2.0)
    assert edge_type_entropy(["A", "A", "B", "B"]) == pytest.approx(1.0)
    assert edge_type_entropy(["A"] * 5) == 0.0
    assert edge_type_entropy([]) == 0.0


def test_gini() -> None:
    assert gini([3.0, 3.0, 3.0]) == pytest.approx(0.0)
    # one holder of everything among 4: (n − 1)/n = 0.75
    assert gini([0, 0, 0, 1]) == pytest.approx(0.75)
    # [1, 3]: mean |xi − xj| over all ordered pairs = (0 + 2 + 2 + 0)/4 = 1; / (2·mean=4) = .25
    assert gini([1, 3]) == pytest.approx(0.25)
    assert gini([]) == 0.0
    with pytest.raises(InputError):
        gini([1, -1])


@given(st.lists(st.floats(min_value=0, max_value=1e6), min_size=1, max_size=40))
@example([0.0, 5e-324])
def test_gini_matches_pairwise_definition(values: list[float]) -> None:
    arr = np.array(values)
    if arr.sum() == 0:
        assert gini(values) == 0.0
        return
    # n²·mean written as n·sum: the mean of [0, 5e-324] underflows to 0.
    reference = np.abs(arr[:, None] - arr[None, :]).sum() / (2 * len(arr) * arr.sum())
    assert gini(values) == pytest.approx(reference, abs=1e-9)


def test_compression_and_proactivity() -> None:
    assert compression(46, 10) == pytest.approx(4.6)
    assert compression(10, 0) is None
    with pytest.raises(InputError):
        compression(-1, 3)
    assert proactivity([0, 1, 2, 3]) == pytest.approx(0.5)
    assert proactivity([]) == 0.0


# ------------------------------------------------------------------ retrieval and QA
def test_recall_at_k() -> None:
    ranked = ["d1", "d2", "d3", "d4"]
    gold = {"d2", "d4", "d9"}
    assert recall_at_k(ranked, gold, 1) == 0.0
    assert recall_at_k(ranked, gold, 2) == pytest.approx(1 / 3)
    assert recall_at_k(ranked, gold, 10) == pytest.approx(2 / 3)
    assert recall_at_k(["d2", "d2"], {"d2"}, 2) == 1.0
    assert recall_at_k(ranked, [], 5) is None
    with pytest.raises(InputError):
        recall_at_k(ranked, gold, 0)


def test_normalize_answer() -> None:
    assert normalize_answer("The  Quick, brown fox — and the dog!") == "quick brown fox dog"
    assert normalize_answer("“Paris,” France.") == "paris france"
    assert normalize_answer("Anne and Andy") == "anne andy"  # whole words only


def test_token_f1() -> None:
    # "cat sat on mat" vs "cat on mat": 3 shared; P = 3/4, R = 1 → F1 = 6/7
    assert token_f1("The cat sat on the mat.", "a cat on a mat") == pytest.approx(6 / 7)
    assert token_f1("Paris, France", "paris france") == 1.0
    assert token_f1("Berlin", "Paris") == 0.0
    assert token_f1("", "") == 0.0
    # repeated tokens count as often as they occur in both
    assert token_f1("red red", "red") == pytest.approx(2 * 0.5 * 1 / 1.5)
    # without a stemmer inflections differ; with one they match
    assert token_f1("running", "run") == 0.0
    assert token_f1("running", "run", stem=lambda t: t[:3]) == 1.0


def test_percentiles() -> None:
    p = percentiles(range(1, 101))
    assert p == pytest.approx({"p50": 50.5, "p95": 95.05, "p99": 99.01})
    assert percentiles([7.0]) == {"p50": 7.0, "p95": 7.0, "p99": 7.0}
    with pytest.raises(InputError):
        percentiles([])


def test_event_overlap_matches_one_to_one_by_jaccard() -> None:
    from enfold.bench.metrics import event_overlap_f1

    gold = [["a", "b", "c", "d"], ["e", "f", "g"]]
    # S0 overlaps gold 0 at 3/4; S1 overlaps gold 0 at 2/5 and gold 1 at 1/4 (< 0.3);
    # S2 is gold 1 with one extra event (3/4).
    system = [["a", "b", "c"], ["c", "d", "g"], ["e", "f", "g", "x"]]
    res = event_overlap_f1(system, gold, threshold=0.3)
    assert sorted((i, j) for i, j, _ in res["matches"]) == [(0, 0), (2, 1)]
    assert res["precision"] == pytest.approx(2 / 3) and res["recall"] == 1.0
    assert event_overlap_f1([], gold)["f1"] == 0.0


def test_bcubed_by_hand() -> None:
    from enfold.bench.metrics import bcubed

    gold = {"a": 1, "b": 1, "c": 2, "d": 2}
    assert bcubed({"a": "x", "b": "x", "c": "y", "d": "y"}, gold)["f1"] == 1.0
    # one system cluster for all: precision 1/2 for every item, recall 1.
    merged = bcubed({k: "x" for k in gold}, gold)
    assert merged["precision"] == pytest.approx(0.5) and merged["recall"] == 1.0
    # items the system leaves out are clusters of their own: precision 1, recall 1/2.
    alone = bcubed({}, gold)
    assert alone["precision"] == 1.0 and alone["recall"] == pytest.approx(0.5)
