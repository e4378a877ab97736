"""Weighted PageRank over the working graph, maintained incrementally.

:func:`pagerank_reference` is the short, obviously correct dense version (tests compare the
fast path against it). :class:`IncrementalPageRank` keeps the edge list as growing arrays
updated by graph listeners (no rescans), and refreshes scores by power iteration on a scipy
sparse matrix, warm-started from the previous vector — so a refresh after a few new events
converges in a handful of iterations instead of recomputing from a uniform start.
Edges are treated as undirected for ranking: provenance flows both ways (an event grounds a
concept; a concept gives weight to its events).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import scipy.sparse as sp

from enfold.graph import EdgeKey, WorkingGraph
from enfold.model import Edge


def pagerank_reference(
    nodes: list[str], edges: list[tuple[str, str, float]], *, damping: float = 0.85,
    tol: float = 1e-10, max_iter: int = 1000,
) -> dict[str, float]:
    """Dense weighted PageRank on the undirected graph; dangling mass spread uniformly."""
    n = len(nodes)
    if n == 0:
        return {}
    index = {x: i for i, x in enumerate(nodes)}
    w = np.zeros((n, n))
    for a, b, weight in edges:
        w[index[a], index[b]] += weight
        w[index[b], index[a]] += weight
    out = w.sum(axis=1)
    r = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        spread = np.where(out > 0, r / np.where(out > 0, out, 1), 0.0)
        new = damping * (w.T @ spread) + (damping * r[out == 0].sum() + 1 - damping) / n
        if np.abs(new - r).sum() < tol:
            r = new
            break
        r = new
    return {x: float(r[i]) for x, i in index.items()}


class IncrementalPageRank:
    """PageRank of one working graph, kept in step through edge listeners."""

    def __init__(self, graph: WorkingGraph, *, damping: float = 0.85, tol: float = 1e-6,
                 max_iter: int = 100) -> None:
        self.graph = graph
        self.damping, self.tol, self.max_iter = damping, tol, max_iter
        self._index: dict[str, int] = {}
        self._names: list[str] = []
        self._src = np.zeros(0, dtype=np.int64)
        self._dst = np.zeros(0, dtype=np.int64)
        self._w = np.zeros(0, dtype=np.float64)
        self._n_edges = 0
        self._slot: dict[EdgeKey, int] = {}
        self._free: list[int] = []
        self._scores = np.zeros(0, dtype=np.float64)
        self._top = 0.0
        self._leaders: list[str] = []
        self.dirty = 0
        self.iterations_last = 0
        for e in graph.all_edges():
            self._on_edge(e.key, e)
        graph.edge_listeners.append(self._on_edge)

    def detach(self) -> None:
        """Stop following the graph's edges (a replaced ranker must not keep listening)."""
        if self._on_edge in self.graph.edge_listeners:
            self.graph.edge_listeners.remove(self._on_edge)

    def _node(self, node_id: str) -> int:
        i = self._index.get(node_id)
        if i is None:
            i = len(self._names)
            self._index[node_id] = i
            self._names.append(node_id)
        return i

    def _on_edge(self, key: EdgeKey, edge: Edge | None) -> None:
        self.dirty += 1
        slot = self._slot.get(key)
        if edge is None:
            if slot is not None:
                self._w[slot] = 0.0
                self._free.append(slot)
                del self._slot[key]
            return
        if slot is None:
            if self._free:
                slot = self._free.pop()
            else:
                slot = self._n_edges
                self._n_edges += 1
                if slot >= len(self._w):
                    size = max(1024, 2 * len(self._w))
                    self._src = np.resize(self._src, size)
                    self._dst = np.resize(self._dst, size)
                    self._w = np.resize(self._w, size)
            self._slot[key] = slot
            self._src[slot] = self._node(key[0])
            self._dst[slot] = self._node(key[2])
        self._w[slot] = max(0.0, edge.weight)

    def refresh(self) -> None:
        """Power iteration warm-started from the previous scores."""
        if len(self._index) < len(self.graph.nodes):
            for node_id in self.graph.nodes:  # isolated nodes rank too (teleport mass)
                if node_id not in self._index:
                    self._node(node_id)
        n = len(self._names)
        self.dirty = 0
        if n == 0:
            self._scores = np.zeros(0)
            return
        m = self._n_edges
        rows = np.concatenate([self._src[:m], self._dst[:m]])
        cols = np.concatenate([self._dst[:m], self._src[:m]])
        vals = np.concatenate([self._w[:m], self._w[:m]])
        w = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
        out = np.asarray(w.sum(axis=1)).ravel()
        inv = np.where(out > 0, 1.0 / np.where(out > 0, out, 1.0), 0.0)
        wt = w.T.tocsr()
        r = np.full(n, 1.0 / n)
        old = self._scores
        if len(old):
            r[: len(old)] = old
            r[len(old):] = 1.0 / n
            r /= r.sum()
        dangling = out == 0
        d = self.damping
        for it in range(1, self.max_iter + 1):
            new = d * (wt @ (r * inv)) + (d * r[dangling].sum() + 1.0 - d) / n
            delta = float(np.abs(new - r).sum())
            r = new
            if delta < self.tol:
                break
        self.iterations_last = it
        self._scores = r
        self._top = float(r.max()) if len(r) else 0.0
        self._leaders = []  # top() is cached per refresh

    @property
    def edges(self) -> int:
        """Live edges tracked."""
        return len(self._slot)

    def score(self, node_id: str) -> float:
        """The node's PageRank normalized so that the top node has 1.0 (0 if unknown)."""
        i = self._index.get(node_id)
        if i is None or i >= len(self._scores) or not len(self._scores):
            return 0.0
        return float(self._scores[i]) / self._top if self._top > 0 else 0.0

    def raw(self) -> Mapping[str, float]:
        return {x: float(self._scores[i]) for i, x in enumerate(self._names)
                if i < len(self._scores) and x in self.graph.nodes}

    def top(self, k: int) -> list[str]:
        """The k highest-ranked nodes still in the graph (computed once per refresh)."""
        if not len(self._scores):
            return []
        if len(self._leaders) < k:
            take = min(len(self._scores), k * 2 + 16)
            idx = np.argpartition(-self._scores, take - 1)[:take]
            idx = idx[np.argsort(-self._scores[idx])]
            self._leaders = [self._names[i] for i in idx]
        return [n for n in self._leaders if n in self.graph.nodes][:k]
