"""Grouping: events the write path left unfolded join the themes they share (issue 20).

The planner folds one event at a time: an event joins a concept when it is close to the
concept's centroid, and pending events form a concept when the newest one is close to two
others. Seen one at a time, a theme whose events are worded differently is missed, or its
first events are spent before the rest arrive, so many of a theme's events stay unfolded.
This step looks at the recent events together, as a batch clustering does:

1. the **pool** is what the planner keeps in view — its pending (unfolded) events and its
   latest events — with the region's events, within ``cluster_window_days`` of the newest
   and at most ``group_pool_max`` of them (the most recent), so the step costs the same at
   any size of the memory;
2. the pool is clustered by **average linkage** over the events' cosines (SciPy), cut where
   the mean cosine between two groups falls below the embedder's ``group`` threshold
   (calibrated, see :mod:`enfold.write.calibration`);
3. in each group of at least ``cluster_min_events`` events that holds unfolded ones: when
   some of its events already belong to concepts, the unfolded ones **reinforce** the
   concept most of them belong to; when none do, the group **forms a concept** of its own,
   named like the planner's (:mod:`enfold.write.naming`).

Everything goes through the executor (one UpdatePlan per group), so provenance, centroids,
counts and the op log follow the same code as on the write path. A second pass at the same
state finds nothing to do: every group with unfolded events was settled.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from scipy.cluster.hierarchy import fcluster, linkage
from scipy.spatial.distance import squareform

from enfold.consolidate.clock import Stamp
from enfold.consolidate.reinforce import unattached
from enfold.graph import WorkingGraph
from enfold.model import EdgeType, NodeKind
from enfold.plan import AddEdge, AddNode, Operation, UpdatePlan
from enfold.settings import Settings
from enfold.text.phrases import TermStats
from enfold.write.apply import execute
from enfold.write.naming import ThemeNamer

__all__ = ["GroupResult", "group_unfolded"]

DAY = 86_400.0
_CONCEPT_EDGES = (EdgeType.GROUNDS, EdgeType.REINFORCES)


@dataclass
class GroupResult:
    attached: list[tuple[str, str]] = field(default_factory=list)  # (event, concept)
    formed: list[str] = field(default_factory=list)  # new concept ids
    visited: int = 0


def _concept_of(graph: WorkingGraph, event_id: str) -> str | None:
    concepts = graph.by_kind[NodeKind.CONCEPT]
    for e in graph.out_edges(event_id):
        if e.type in _CONCEPT_EDGES and e.dst in concepts:
            return e.dst
    return None


def _pool(graph: WorkingGraph, settings: Settings, recent: Iterable[str],
          events: Iterable[str] | None) -> list[str]:
    evs = graph.by_kind[NodeKind.EVENT]
    vectors = graph.event_vectors
    seeds = [e for e in dict.fromkeys([*recent, *(events or ())])
             if e in evs and vectors.get(e) is not None]
    if not any(unattached(graph, e) for e in seeds):
        return []
    newest = max(graph.nodes[e].ts for e in seeds)
    horizon = newest - settings.cluster_window_days * DAY
    pool = [e for e in seeds if graph.nodes[e].ts >= horizon]
    ranked = sorted(pool, key=lambda e: (-graph.nodes[e].ts, e))[:settings.group_pool_max]
    return sorted(ranked, key=lambda e: (graph.nodes[e].ts, e))


def _central(graph: WorkingGraph, members: list[str], vecs: np.ndarray) -> str:
    centroid = vecs.mean(axis=0)
    best = members[int(np.argmax(vecs @ centroid))]
    return graph.nodes[best].text[:240]


def group_unfolded(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    *,
    threshold: float,
    terms: TermStats,
    recent: Iterable[str],
    events: Iterable[str] | None = None,
) -> GroupResult:
    """Cluster the recent events and settle the unfolded ones; see the module docstring.

    ``threshold``: the mean cosine two groups need to be joined; ``terms``: the namespace's
    term statistics (for labels); ``recent``: the events the planner keeps in view (its
    pending pool and latest events); ``events``: the region's events. Runs inside an open
    graph transaction.
    """
    result = GroupResult()
    pool = _pool(graph, settings, recent, events)
    result.visited = len(pool)
    if len(pool) < settings.cluster_min_events:
        return result
    vecs = np.stack([np.asarray(graph.event_vectors.get(e), dtype=np.float64) for e in pool])
    vecs /= np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
    dist = np.clip(1.0 - vecs @ vecs.T, 0.0, 2.0)
    np.fill_diagonal(dist, 0.0)
    labels = fcluster(linkage(squareform(dist, checks=False), method="average"),
                      t=1.0 - threshold, criterion="distance")
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    for rows in sorted(groups.values(), key=lambda r: pool[r[0]]):
        if len(rows) < settings.cluster_min_events:
            continue
        members = [pool[i] for i in rows]
        owners = [_concept_of(graph, m) for m in members]
        loose = [m for m, o in zip(members, owners, strict=True) if o is None]
        if not loose:
            continue
        held = Counter(o for o in owners if o is not None)
        ops: list[Operation] = []
        if held:
            cid = held.most_common(1)[0][0]
            ops = [AddEdge(src=m, dst=cid, type=EdgeType.REINFORCES,
                           reasoning=f"consolidation: the event clusters with {held[cid]} "
                                     f"of the concept's events (mean cosine ≥ {threshold:.2f})")
                   for m in loose]
        else:
            name = ThemeNamer.of(graph).name(graph, members, terms, settings)
            ops = [AddNode(ref="theme", kind=NodeKind.CONCEPT, text=name.label[:4000],
                           attrs={
                "keywords": name.keywords,
                "summary": _central(graph, members, vecs[rows]),
                "aliases": [],
                "named_at": len(members),
                "last_ts": max(graph.nodes[m].ts for m in members),
            }, grounded_in=members, reasoning=f"consolidation: {len(members)} unfolded events "
                                              f"cluster (mean cosine ≥ {threshold:.2f})")]
            ops += [AddEdge(src=m, dst="theme", type=EdgeType.GROUNDS,
                            reasoning="event grounds the theme it clusters in")
                    for m in members]
        step = max(2, settings.max_ops_per_plan)
        created: str | None = None
        for i in range(0, len(ops), step):
            chunk = ops[i:i + step]
            if created is not None:  # later chunks name the concept the first one made
                chunk = [op.model_copy(update={"dst": created})
                         if isinstance(op, AddEdge) and op.dst == "theme" else op
                         for op in chunk]
            applied = execute(UpdatePlan(plan_id=stamp.plan_id, namespace=graph.namespace,
                                         planner="consolidate", reasoning="grouping",
                                         operations=chunk), graph, settings, at=stamp.at)
            created = created or applied.created.get("theme")
        if held:
            result.attached += [(m, cid) for m in loose]
        elif created is not None:
            target = graph.resolve(created)
            if target in graph.by_kind[NodeKind.CONCEPT]:
                result.formed.append(target)
            result.attached += [(m, target) for m in members]
    return result
