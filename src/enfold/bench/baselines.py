"""Flat retrieval baselines that the benchmarks run over the same texts as enfold.

A baseline sees the texts as a flat list — no graph, no time, no people — so the difference
between it and enfold on the same turns and the same embedder is what the graph adds:

- :class:`BM25Retriever` — lexical: SQLite FTS5 in memory, ranked by FTS5's ``bm25()``;
- :class:`DenseRetriever` — cosine top-k over the embeddings of any ``embed_fn``;
- :class:`HybridRRF` — reciprocal-rank fusion of several retrievers (Cormack et al., 2009);
- :class:`WithNeighbours` — any retriever's hits, each followed by the documents up to
  ``width`` places before and after it in index order (the neighbouring turns of a chat).

All three share one small interface (:class:`Retriever`): ``index(ids, texts)`` adds
documents, ``search(query, k)`` returns up to ``k`` ``(id, score)`` pairs, best first, with
higher scores better. Results are deterministic: ties are broken by insertion order.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from enfold.errors import InputError

EmbedFn = Callable[[list[str]], np.ndarray]

# Word characters only: every FTS5 operator character (" * ^ - + : ( ) { } , .) falls out,
# and bare words such as AND / OR / NOT / NEAR are quoted below, so they are plain terms.
_TERM = re.compile(r"\w+", re.UNICODE)


@runtime_checkable
class Retriever(Protocol):
    """What the benchmark harness needs from a flat baseline."""

    def index(self, ids: list[str], texts: list[str]) -> None:
        """Add documents; ids must be unique across calls."""

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """Up to ``k`` (id, score) pairs, best first (higher score = better)."""
        ...


def _check_batch(ids: Sequence[str], texts: Sequence[str], known: set[str]) -> None:
    if len(ids) != len(texts):
        raise InputError(f"{len(ids)} ids but {len(texts)} texts")
    batch: set[str] = set()
    for doc_id in ids:
        if not isinstance(doc_id, str):
            raise InputError(f"document ids must be strings, got {doc_id!r}")
        if doc_id in known or doc_id in batch:
            raise InputError(f"duplicate document id {doc_id!r}")
        batch.add(doc_id)


def _check_k(k: int) -> None:
    if k < 1:
        raise InputError(f"k must be >= 1, got {k}")


def fts5_query(text: str, max_terms: int = 64) -> str | None:
    """Turn arbitrary user text into a safe FTS5 query: quoted terms joined by OR.

    Only word characters survive, each distinct term (case-folded, first ``max_terms``) is
    wrapped in double quotes — so ``AND``, ``NEAR`` or ``*`` in user text can never be parsed
    as FTS5 syntax — and the terms are OR-ed, as a bag-of-words BM25 query should be.
    Returns ``None`` when the text has no terms at all.
    """
    terms = list(dict.fromkeys(t.casefold() for t in _TERM.findall(text)))[:max_terms]
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class BM25Retriever:
    """Lexical baseline: an in-memory SQLite FTS5 table ranked by ``bm25()``.

    FTS5's ``bm25()`` uses the fixed constants k1 = 1.2 and b = 0.75 (SQLite offers no way to
    change them), so this baseline is standard BM25 as SQLite ships it, not the k1 = 1.5 of
    enfold's own lexical anchor. Scores are ``-bm25()``, so higher is better. Text is
    tokenized by FTS5's ``unicode61`` tokenizer with diacritics removed; no stemming.
    """

    def __init__(self) -> None:
        self._db = sqlite3.connect(":memory:")
        self._db.execute(
            "CREATE VIRTUAL TABLE docs USING fts5("
            "doc_id UNINDEXED, body, tokenize = 'unicode61 remove_diacritics 2')"
        )
        self._ids: set[str] = set()

    def __len__(self) -> int:
        return len(self._ids)

    def index(self, ids: list[str], texts: list[str]) -> None:
        """Add documents (one FTS5 row each)."""
        _check_batch(ids, texts, self._ids)
        with self._db:
            self._db.executemany("INSERT INTO docs (doc_id, body) VALUES (?, ?)",
                                 zip(ids, texts, strict=True))
        self._ids.update(ids)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best documents for ``query`` by BM25; documents sharing no term are
        not returned."""
        _check_k(k)
        match = fts5_query(query)
        if match is None or not self._ids:
            return []
        rows = self._db.execute(
            "SELECT doc_id, bm25(docs) AS score FROM docs WHERE docs MATCH ? "
            "ORDER BY score, rowid LIMIT ?",
            (match, k),
        ).fetchall()
        return [(str(doc_id), -float(score)) for doc_id, score in rows]

    def close(self) -> None:
        """Release the in-memory database."""
        self._db.close()


class DenseRetriever:
    """Dense baseline: exact cosine top-k over ``embed_fn`` embeddings.

    ``embed_fn(texts)`` returns an (n, d) float array, L2-normalized. Rows are normalized
    again here (a no-op for a well-behaved embedder) so that scores are cosines even when
    one is not; an all-zero row scores 0 against everything.
    """

    def __init__(self, embed_fn: EmbedFn) -> None:
        self._embed = embed_fn
        self._ids: list[str] = []
        self._known: set[str] = set()
        self._mat: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def _vectors(self, texts: list[str]) -> np.ndarray:
        vecs = np.asarray(self._embed(texts), dtype=np.float32)
        if vecs.ndim != 2 or vecs.shape[0] != len(texts):
            raise InputError(
                f"embed_fn returned shape {vecs.shape} for {len(texts)} texts; expected (n, d)")
        if self._mat is not None and vecs.shape[1] != self._mat.shape[1]:
            raise InputError(
                f"embed_fn returned dimension {vecs.shape[1]}, index has {self._mat.shape[1]}")
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.where(norms == 0.0, 1.0, norms)

    def index(self, ids: list[str], texts: list[str]) -> None:
        """Embed and add documents."""
        _check_batch(ids, texts, self._known)
        if not ids:
            return
        vecs = self._vectors(list(texts))
        self._mat = vecs if self._mat is None else np.vstack([self._mat, vecs])
        self._ids.extend(ids)
        self._known.update(ids)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` documents most cosine-similar to ``query``."""
        _check_k(k)
        if self._mat is None:
            return []
        scores = self._mat @ self._vectors([query])[0]
        n = min(k, scores.shape[0])
        # a stable sort on -score keeps insertion order among equal scores
        order = np.argsort(-scores, kind="stable")[:n]
        return [(self._ids[i], float(scores[i])) for i in order]


class HybridRRF:
    """Reciprocal-rank fusion: ``score(d) = Σ_r 1 / (k + rank_r(d))``, rank starting at 1.

    Each retriever contributes its top ``depth`` results (default: ``max(50, 2·k)`` of the
    search's ``k``); a document missing from a retriever's list gets nothing from it. Ties
    are broken by the best single rank, then by the retriever order and position.
    """

    def __init__(self, retrievers: Sequence[Retriever], k: int = 60,
                 depth: int | None = None) -> None:
        if not retrievers:
            raise InputError("HybridRRF needs at least one retriever")
        if k < 0:
            raise InputError(f"the RRF constant k must be >= 0, got {k}")
        if depth is not None:
            _check_k(depth)
        self.retrievers = list(retrievers)
        self.k = k
        self.depth = depth

    def index(self, ids: list[str], texts: list[str]) -> None:
        """Index the same documents in every retriever."""
        for r in self.retrievers:
            r.index(ids, texts)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        """The ``k`` best documents by fused reciprocal rank."""
        _check_k(k)
        depth = self.depth or max(50, 2 * k)
        scores: dict[str, float] = {}
        best: dict[str, tuple[int, int]] = {}  # doc -> (best rank, first seen order)
        seen = 0
        for r in self.retrievers:
            for rank, (doc_id, _) in enumerate(r.search(query, depth), start=1):
                scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (self.k + rank)
                if doc_id not in best:
                    best[doc_id] = (rank, seen)
                    seen += 1
                elif rank < best[doc_id][0]:
                    best[doc_id] = (rank, best[doc_id][1])
        order = sorted(scores, key=lambda d: (-scores[d], best[d]))
        return [(d, scores[d]) for d in order[:k]]


class WithNeighbours:
    """A retriever whose every hit brings its neighbours in index order: hit, then the
    documents 1, …, ``width`` places before and after it (nearest first), skipping those
    already listed. For a conversation indexed turn by turn, the turns around a hit."""

    def __init__(self, inner: Retriever, width: int = 2, *,
                 indexed: Sequence[str] = ()) -> None:
        """``indexed``: the ids ``inner`` already holds, in index order."""
        if width < 0:
            raise InputError(f"width must be >= 0, got {width}")
        self.inner, self.width = inner, width
        self._order: list[str] = list(indexed)
        self._pos: dict[str, int] = {d: i for i, d in enumerate(self._order)}

    def index(self, ids: list[str], texts: list[str]) -> None:
        self.inner.index(ids, texts)
        for doc_id in ids:
            self._pos[doc_id] = len(self._order)
            self._order.append(doc_id)

    def search(self, query: str, k: int) -> list[tuple[str, float]]:
        _check_k(k)
        out: list[tuple[str, float]] = []
        seen: set[str] = set()
        for doc_id, score in self.inner.search(query, k):
            i = self._pos[doc_id]
            around = [i] + [j for d in range(1, self.width + 1) for j in (i - d, i + d)]
            for j in around:
                if 0 <= j < len(self._order) and self._order[j] not in seen:
                    seen.add(self._order[j])
                    out.append((self._order[j], score))
            if len(out) >= k:
                break
        return out[:k]
