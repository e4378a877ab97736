"""Nearest concepts by centroid, for the passes that compare against every concept.

The working graph keeps concept centroids in the same vector index as facts (and any other
derived node with a vector). Facts sit near their concept's centroid by construction and
outnumber concepts a hundredfold in a long stream, so a filtered search over that index for
"the nearest *concepts*" wades through facts first and degrades into a scan of the whole
index. :class:`ConceptCentroids` holds a matrix of just the concept centroids instead —
rebuilt when a pass changes a centroid (a merge, an attachment), which costs one stack of a
few hundred rows — and answers single queries and batches with one matrix product.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import NodeKind


class ConceptCentroids:
    """A snapshot matrix of the graph's concept centroids (L2-normalized rows)."""

    def __init__(self, graph: WorkingGraph) -> None:
        self.graph = graph
        self.ids: list[str] = []
        self.mat = np.zeros((0, 0), dtype=np.float32)
        self.stale = True

    def invalidate(self) -> None:
        """A centroid changed or a concept came or went: rebuild before the next query."""
        self.stale = True

    def _build(self) -> None:
        g = self.graph
        rows = [(cid, g.node_vectors.get(cid)) for cid in g.of_kind(NodeKind.CONCEPT)]
        kept = [(cid, v) for cid, v in rows if v is not None]
        self.ids = [cid for cid, _ in kept]
        self.mat = (np.stack([v for _, v in kept]).astype(np.float32) if kept
                    else np.zeros((0, 0), dtype=np.float32))
        self.stale = False

    def nearest(self, vec: np.ndarray, k: int,
                accept: Callable[[str], bool] | None = None) -> list[tuple[str, float]]:
        """The ``k`` concepts with the highest cosine to ``vec`` that ``accept`` admits."""
        if self.stale:
            self._build()
        if not self.ids or k <= 0:
            return []
        q = np.asarray(vec, dtype=np.float32).reshape(-1)
        n = float(np.linalg.norm(q))
        if n == 0 or q.shape[0] != self.mat.shape[1]:
            return []
        sims = self.mat @ (q / n)
        out: list[tuple[str, float]] = []
        for i in np.argsort(-sims, kind="stable"):
            cid = self.ids[int(i)]
            if accept is None or accept(cid):
                out.append((cid, float(sims[int(i)])))
                if len(out) == k:
                    break
        return out

    def best_for(self, vecs: np.ndarray) -> list[tuple[str, float] | None]:
        """For each row of ``vecs``, the nearest concept and its cosine (None: no concept)."""
        if self.stale:
            self._build()
        if not self.ids or len(vecs) == 0 or vecs.shape[1] != self.mat.shape[1]:
            return [None] * len(vecs)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        sims = (vecs / np.where(norms > 0, norms, 1.0)) @ self.mat.T
        best = np.argmax(sims, axis=1)
        return [(self.ids[int(j)], float(sims[i, j])) for i, j in enumerate(best)]
