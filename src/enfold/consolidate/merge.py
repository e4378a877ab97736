"""Compression: near-duplicate concepts merge.

Two concepts are duplicates when their normalized label similarity (over labels and
aliases, :func:`enfold.write.apply.label_similarity`) or their centroid cosine reaches
``settings.merge_threshold``. They merge through :func:`enfold.write.apply.merge_nodes`, the
executor's own MERGE_NODES: the survivor absorbs edges (parallel edges of one type keep the
higher weight), aliases and provenance, and the absorbed id keeps resolving to it.

Which pairs may merge:

* only concepts of the same ``level`` (a parent theme, ``attrs["level"] >= 1``, is an
  abstraction of its children, not a duplicate of a concept below it);
* never a concept and one of its PART_OF ancestors — a parent theme is never merged into its
  own child, however close their labels;
* a parent theme lies near its children's centroids by construction, so for parent themes
  only the label counts (the executor's near-duplicate rule does the same).

The survivor is the more accessed concept; on a tie the one with more events, then the
older one, then the smaller id (so the outcome does not depend on iteration order).

:func:`duplicate_pairs_reference` is the obvious all-pairs version; :func:`find_duplicate`
is the fast path used per candidate (vector search plus a label scan with difflib's cheap
upper bounds first), and the tests check one against the other.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from enfold.consolidate.centroids import ConceptCentroids
from enfold.consolidate.clock import Stamp
from enfold.graph import WorkingGraph
from enfold.model import EdgeType, Node, NodeKind
from enfold.settings import Settings
from enfold.write.apply import (
    label_similarity,
    merge_nodes,
    node_diff,
    normalize_label,
    normalized_similarity,
)

_MAX_DEPTH = 16  # PART_OF chains are short; this only guards against cycles


@dataclass
class MergeResult:
    merged: int = 0
    visited: int = 0  # candidate concepts examined
    pairs: list[tuple[str, str]] = field(default_factory=list)  # (survivor, absorbed)


def level(node: Node) -> int:
    try:
        return int(node.attrs.get("level") or 0)
    except (TypeError, ValueError):
        return 0


def ancestors(graph: WorkingGraph, node_id: str) -> set[str]:
    """Every concept reachable from ``node_id`` along PART_OF (child → parent) edges."""
    seen: set[str] = set()
    frontier = [node_id]
    for _ in range(_MAX_DEPTH):
        nxt = [e.dst for n in frontier for e in graph.out_edges(n)
               if e.type is EdgeType.PART_OF and e.dst not in seen]
        if not nxt:
            break
        seen.update(nxt)
        frontier = nxt
    return seen


def mergeable(graph: WorkingGraph, a: str, b: str) -> bool:
    """Same level, and neither is a PART_OF ancestor of the other."""
    na, nb = graph.nodes[a], graph.nodes[b]
    if a == b or level(na) != level(nb):
        return False
    return b not in ancestors(graph, a) and a not in ancestors(graph, b)


def similarity(graph: WorkingGraph, a: str, b: str) -> float:
    """max(label similarity over names, centroid cosine — level-0 concepts only)."""
    na, nb = graph.nodes[a], graph.nodes[b]
    label = max((label_similarity(x, y) for x in na.names() for y in nb.names()), default=0.0)
    cos = 0.0
    if level(na) == 0 and level(nb) == 0:
        va, vb = graph.node_vectors.get(a), graph.node_vectors.get(b)
        if va is not None and vb is not None:
            cos = float(np.dot(va, vb))
    return max(label, cos)


def survivor(graph: WorkingGraph, a: str, b: str) -> tuple[str, str]:
    """(keep, absorb): more accessed, then more events, then older, then smaller id."""
    def rank(node_id: str) -> tuple[int, int, float, str]:
        n = graph.nodes[node_id]
        events = max(len(n.grounded_in), int(n.attrs.get("event_count") or 0))
        return (-n.access_count, -events, n.created_at, node_id)

    keep, absorb = sorted((a, b), key=rank)
    return keep, absorb


def duplicate_pairs_reference(graph: WorkingGraph, settings: Settings) -> set[frozenset[str]]:
    """Every unordered pair of concepts that may merge, by brute force (for the tests)."""
    concepts = sorted(graph.of_kind(NodeKind.CONCEPT))
    out: set[frozenset[str]] = set()
    for i, a in enumerate(concepts):
        for b in concepts[i + 1:]:
            if mergeable(graph, a, b) and similarity(graph, a, b) >= settings.merge_threshold:
                out.add(frozenset((a, b)))
    return out


class _Labels:
    """Normalized names of every concept, kept across passes in ``graph.indexes`` and brought
    in step with the graph at the start of each pass (a concept whose node object changed
    is read again) and after each merge. Comparing a candidate against all concepts is
    :func:`normalized_similarity`, whose cached length and character-count bounds settle
    most pairs without difflib; a concept's matches are remembered until any name changes,
    so a pass over concepts that only gained events compares nothing."""

    def __init__(self, graph: WorkingGraph) -> None:
        self.graph = graph
        self.norm: dict[str, list[str]] = {}
        self.seen: dict[str, Node] = {}  # the node object each entry was read from
        self.memo: dict[tuple[str, float], list[tuple[str, float]]] = {}

    @classmethod
    def of(cls, graph: WorkingGraph) -> _Labels:
        found = graph.indexes.of(_Labels, lambda: cls(graph))
        found.sync()
        return found

    def sync(self) -> None:
        concepts = self.graph.by_kind[NodeKind.CONCEPT]
        for cid in [c for c in self.norm if c not in concepts]:
            self.refresh(cid)
        for cid in concepts:
            if self.seen.get(cid) is not self.graph.nodes.get(cid):
                self.refresh(cid)

    def refresh(self, cid: str) -> None:
        node = self.graph.nodes.get(cid)
        if node is None:
            self.seen.pop(cid, None)
            if self.norm.pop(cid, None) is not None:
                self.memo.clear()
            return
        self.seen[cid] = node
        norm = [n for n in dict.fromkeys(normalize_label(x) for x in node.names()) if n]
        if self.norm.get(cid) != norm:
            self.norm[cid] = norm
            self.memo.clear()

    def matches(self, cid: str, threshold: float) -> list[tuple[str, float]]:
        """Concepts whose label similarity to ``cid`` reaches ``threshold`` — exactly
        :func:`label_similarity`."""
        hit = self.memo.get((cid, threshold))
        if hit is not None:
            return hit
        mine = self.norm.get(cid, [])
        out: list[tuple[str, float]] = []
        for other, theirs in self.norm.items():
            if other == cid:
                continue
            best = max((normalized_similarity(x, y, threshold) for x in mine for y in theirs),
                       default=0.0)
            if best >= threshold:
                out.append((other, best))
        self.memo[(cid, threshold)] = out
        return out


def find_duplicate(graph: WorkingGraph, settings: Settings, cid: str, labels: _Labels,
                   centroids: ConceptCentroids | None = None) -> tuple[str, float] | None:
    """The most similar concept ``cid`` may merge with, if one reaches the threshold."""
    thr = settings.merge_threshold
    node = graph.nodes[cid]
    scores: dict[str, float] = dict(labels.matches(cid, thr))
    vec = graph.node_vectors.get(cid)
    if vec is not None and level(node) == 0:
        near = centroids if centroids is not None else ConceptCentroids(graph)
        hits = near.nearest(
            vec, 8, accept=lambda i: i != cid and level(graph.nodes[i]) == 0)
        for other, cos in hits:
            if cos >= thr:
                scores[other] = max(scores.get(other, 0.0), cos)
    best: tuple[str, float] | None = None
    for other, score in sorted(scores.items(), key=lambda x: (-x[1], x[0])):
        if mergeable(graph, cid, other):
            best = (other, score)
            break
    return best


def _keep_newest_activity(graph: WorkingGraph, stamp: Stamp, keep: str, absorbed: Node
                          ) -> None:
    """merge_nodes keeps the survivor's attrs; its last activity is the later of the two."""
    node = graph.nodes[keep]
    mine, theirs = node.attrs.get("last_ts"), absorbed.attrs.get("last_ts")
    if isinstance(theirs, (int, float)) and (not isinstance(mine, (int, float)) or theirs > mine):
        new = node.with_changes(attrs={**node.attrs, "last_ts": float(theirs)})
        graph.put_node(new)
        before, after = node_diff(node, new)
        stamp.op(graph, "UPDATE_NODE", keep, before, after, "merged concept's last activity")


def compress(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    *,
    region: Iterable[str] | None = None,
    centroids: ConceptCentroids | None = None,
) -> MergeResult:
    """Merge near-duplicate concepts, starting from the concepts of ``region`` (all when
    None). A survivor is examined again, since absorbing moved its centroid and aliases.
    Runs inside an open graph transaction."""
    result = MergeResult()
    concepts = graph.by_kind[NodeKind.CONCEPT]
    start = sorted(concepts) if region is None else sorted(
        {graph.resolve(x) for x in region} & concepts.keys())
    if not start:
        return result
    labels = _Labels.of(graph)
    near = centroids if centroids is not None else ConceptCentroids(graph)
    work = deque(start)
    queued = set(start)
    while work:
        cid = work.popleft()
        queued.discard(cid)
        if cid not in concepts:
            continue
        result.visited += 1
        found = find_duplicate(graph, settings, cid, labels, near)
        if found is None:
            continue
        other, score = found
        keep, absorb = survivor(graph, cid, other)
        kn, an = graph.nodes[keep], graph.nodes[absorb]
        merge_nodes(graph, keep, absorb, at=stamp.at, plan_id=stamp.plan_id,
                    reasoning=f"consolidation: {an.text!r} duplicates {kn.text!r} "
                              f"(similarity {score:.2f} ≥ {settings.merge_threshold})")
        _keep_newest_activity(graph, stamp, keep, an)
        labels.refresh(absorb)
        labels.refresh(keep)
        near.invalidate()
        result.merged += 1
        result.pairs.append((keep, absorb))
        if keep not in queued:
            work.append(keep)
            queued.add(keep)
    return result
