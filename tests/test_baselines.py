"""Flat retrieval baselines on a toy corpus."""

from __future__ import annotations

import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from enfold.bench.baselines import (
    BM25Retriever,
    DenseRetriever,
    HybridRRF,
    Retriever,
    fts5_query,
)
from enfold.errors import InputError

IDS = ["d1", "d2", "d3", "d4", "d5", "d6"]
TEXTS = [
    "We deployed the auth service to staging on Monday.",
    "Lunch with Maria at the Italian place near the office.",
    "The staging deployment broke the client demo.",
    "Booked a hotel in Vienna for the concert in March.",
    "Maria recommended a book about distributed systems.",
    "Morning run along the river, 5 km.",
]


def fake_embed(texts: list[str], dim: int = 64) -> np.ndarray:
    """Deterministic bag-of-words embedding: each word hashes (crc32) to one axis."""
    out = np.zeros((len(texts), dim), dtype=np.float32)
    for row, text in enumerate(texts):
        for word in text.lower().replace(".", " ").replace(",", " ").split():
            out[row, zlib.crc32(word.encode()) % dim] += 1.0
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return out / np.where(norms == 0, 1, norms)


class Fixed:
    """A retriever that returns a fixed ranking, to check the fusion arithmetic."""

    def __init__(self, ranking: list[str]) -> None:
        self.ranking = ranking
        self.indexed: list[str] = []

    def index(self, ids: list[str], texts: list[str]) -> None:
        self.indexed.extend(ids)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        return [(d, 1.0 / (i + 1)) for i, d in enumerate(self.ranking[:k])]


def test_all_share_the_interface() -> None:
    bm25, dense = BM25Retriever(), DenseRetriever(fake_embed)
    for r in (bm25, dense, HybridRRF([bm25, dense])):
        assert isinstance(r, Retriever)


# ------------------------------------------------------------------ BM25
def test_bm25_ranks_the_exact_term_document_first() -> None:
    r = BM25Retriever()
    r.index(IDS, TEXTS)
    hits = r.search("Vienna hotel", 3)
    assert hits[0][0] == "d4"
    assert {d for d, _ in r.search("staging", 5)} == {"d1", "d3"}
    scores = [s for _, s in r.search("staging Maria", 5)]
    assert scores == sorted(scores, reverse=True)
    assert r.search("zebra", 5) == []
    assert len(r.search("the", 2)) == 2  # k caps the result


def test_bm25_prefers_rarer_and_repeated_terms() -> None:
    r = BM25Retriever()
    r.index(["a", "b", "c", "d"],
            ["cat cat cat dog", "cat dog", "dog dog", "bird"])
    assert [d for d, _ in r.search("cat", 4)] == ["a", "b"]


@pytest.mark.parametrize("query", [
    '"AND OR NEAR( * ^ -',
    "NOT", "AND", "OR", "NEAR(staging maria, 2)", "body:staging", "{body}: x",
    '"""', "'", "*", "^staging", "-", "staging -maria", "(", ")", "", "   ", "_",
    "Maria's \"book\" AND (systems OR", "café ñandú 東京",
])
def test_bm25_never_raises_on_fts5_syntax(query: str) -> None:
    r = BM25Retriever()
    r.index(IDS, TEXTS)
    hits = r.search(query, 5)
    assert isinstance(hits, list)


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_bm25_accepts_any_text(query: str) -> None:
    r = BM25Retriever()
    r.index(IDS, TEXTS)
    r.search(query, 3)


def test_fts5_query_quotes_terms() -> None:
    assert fts5_query("Staging AND maria*") == '"staging" OR "and" OR "maria"'
    assert fts5_query("staging staging STAGING") == '"staging"'
    assert fts5_query("*^-()") is None


def test_bad_batches_and_k() -> None:
    r = BM25Retriever()
    with pytest.raises(InputError):
        r.index(["a", "b"], ["only one"])
    r.index(["a"], ["x"])
    with pytest.raises(InputError):
        r.index(["a"], ["again"])
    with pytest.raises(InputError):
        r.index(["b", "b"], ["y", "z"])
    with pytest.raises(InputError):
        r.search("x", 0)


# ------------------------------------------------------------------ dense
def test_dense_ranks_by_cosine() -> None:
    r = DenseRetriever(fake_embed)
    assert r.search("anything", 3) == []
    r.index(IDS, TEXTS)
    hits = r.search("booked a hotel in vienna", 2)
    assert hits[0][0] == "d4"
    assert hits[0][1] == pytest.approx(
        float(fake_embed([TEXTS[3]])[0] @ fake_embed(["booked a hotel in vienna"])[0]), abs=1e-6)
    assert len(r.search("x", 100)) == len(IDS)


def test_dense_incremental_index_and_ties() -> None:
    def axis(texts: list[str]) -> np.ndarray:
        # "a…" → e1, anything else → e2 (unnormalized on purpose: the retriever normalizes)
        return np.array([[3.0, 0.0] if t.startswith("a") else [0.0, 2.0] for t in texts])

    r = DenseRetriever(axis)
    r.index(["x1", "x2"], ["apple", "pear"])
    r.index(["x3"], ["avocado"])
    hits = r.search("apricot", 3)
    assert [d for d, _ in hits] == ["x1", "x3", "x2"]  # x1/x3 tie: insertion order
    assert [s for _, s in hits] == pytest.approx([1.0, 1.0, 0.0])


def test_dense_rejects_bad_embeddings() -> None:
    r = DenseRetriever(lambda texts: np.zeros((len(texts) + 1, 4)))
    with pytest.raises(InputError):
        r.index(["a"], ["x"])
    r2 = DenseRetriever(lambda texts: np.ones((len(texts), 4 if texts[0] == "x" else 5)))
    r2.index(["a"], ["x"])
    with pytest.raises(InputError):
        r2.search("y", 1)


# ------------------------------------------------------------------ RRF
def test_rrf_fusion_order_by_hand() -> None:
    # R1 = [a, b, c], R2 = [c, a, d], k = 60:
    #   a = 1/61 + 1/62 = .032522   c = 1/63 + 1/61 = .032266
    #   b = 1/62        = .016129   d = 1/63        = .015873
    fused = HybridRRF([Fixed(["a", "b", "c"]), Fixed(["c", "a", "d"])], k=60)
    hits = fused.search("q", 10)
    assert [d for d, _ in hits] == ["a", "c", "b", "d"]
    assert [s for _, s in hits] == pytest.approx(
        [1 / 61 + 1 / 62, 1 / 63 + 1 / 61, 1 / 62, 1 / 63])
    assert [d for d, _ in fused.search("q", 2)] == ["a", "c"]


def test_rrf_ties_break_by_best_rank() -> None:
    # x: ranks 1 and 3 → 1/61 + 1/63 = .032266 beats y: ranks 2 and 2 → 2/62 = .032258;
    # w (1/61, rank 1 in R2) beats z (1/63).
    fused = HybridRRF([Fixed(["x", "y", "z"]), Fixed(["w", "y", "x"])], k=60)
    assert [d for d, _ in fused.search("q", 4)] == ["x", "y", "w", "z"]
    # p and q both score 1/61 + 1/62 with best rank 1: the first one seen (R1's top) wins
    tied = HybridRRF([Fixed(["p", "q"]), Fixed(["q", "p"])], k=60)
    assert [d for d, _ in tied.search("q", 2)] == ["p", "q"]
    tied_rev = HybridRRF([Fixed(["q", "p"]), Fixed(["p", "q"])], k=60)
    assert [d for d, _ in tied_rev.search("q", 2)] == ["q", "p"]


def test_rrf_indexes_every_retriever_and_fuses_real_ones() -> None:
    a, b = Fixed([]), Fixed([])
    HybridRRF([a, b]).index(["1", "2"], ["one", "two"])
    assert a.indexed == b.indexed == ["1", "2"]

    hybrid = HybridRRF([BM25Retriever(), DenseRetriever(fake_embed)])
    hybrid.index(IDS, TEXTS)
    hits = hybrid.search("Vienna hotel concert", 3)
    assert hits[0][0] == "d4"
    assert len({d for d, _ in hits}) == len(hits)
    with pytest.raises(InputError):
        HybridRRF([])
