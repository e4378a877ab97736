"""Accumulation: an event that corroborates an existing concept reinforces it.

The write path already does this for each event as it is folded (the planner reinforces the
nearest concept; the executor turns a near-duplicate new concept into reinforcement). What
it cannot see is a concept that appeared or moved *after* the event was folded — formed
from later events, or shifted by a merge. This pass looks again at events that are still
unattached to any concept and reinforces the nearest concept when the event's cosine to its
centroid reaches the planner's assign threshold, exactly the test the planner applies.

Reinforcement goes through the executor (a REINFORCES edge in an UpdatePlan), so the
concept's provenance, centroid, event count and strength are updated by the same code as on
the write path, and the op log records it. Assignments of one round use the centroids as
they were at the start of the round; rounds repeat until nothing more attaches, so a pass
reaches a fixed point and the next pass at the same state does nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from enfold.consolidate.centroids import ConceptCentroids
from enfold.consolidate.clock import Stamp
from enfold.graph import WorkingGraph
from enfold.model import EdgeType, NodeKind
from enfold.plan import AddEdge, Operation, UpdatePlan
from enfold.settings import Settings
from enfold.write.apply import execute

_CONCEPT_EDGES = (EdgeType.GROUNDS, EdgeType.REINFORCES)
MAX_ROUNDS = 8


@dataclass
class ReinforceResult:
    reinforced: int = 0  # events attached to a concept
    visited: int = 0  # unattached events examined
    attached: list[tuple[str, str]] = field(default_factory=list)  # (event, concept)


def unattached(graph: WorkingGraph, event_id: str) -> bool:
    """True when the event grounds or reinforces no concept."""
    concepts = graph.by_kind[NodeKind.CONCEPT]
    return not any(e.type in _CONCEPT_EDGES and e.dst in concepts
                   for e in graph.out_edges(event_id))


def _vector(graph: WorkingGraph, event_id: str) -> np.ndarray:
    vec = graph.event_vectors.get(event_id)
    assert vec is not None  # the pool holds embedded events only
    return vec


def accumulate(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    *,
    threshold: float,
    events: Iterable[str] | None = None,
    centroids: ConceptCentroids | None = None,
) -> ReinforceResult:
    """Attach unattached events (of ``events``; all when None) to their nearest concept
    when its cosine reaches ``threshold``. Runs inside an open graph transaction."""
    result = ReinforceResult()
    evs = graph.by_kind[NodeKind.EVENT]
    concepts = graph.by_kind[NodeKind.CONCEPT]
    if not concepts:
        return result
    pool = [e for e in (evs if events is None else dict.fromkeys(events))
            if e in evs and graph.event_vectors.get(e) is not None and unattached(graph, e)]
    pool.sort(key=lambda e: (graph.nodes[e].ts, e))
    result.visited = len(pool)
    near = centroids if centroids is not None else ConceptCentroids(graph)
    for _ in range(MAX_ROUNDS):
        if not pool:
            break
        vecs = np.stack([_vector(graph, e) for e in pool])
        found = [(ev, hit[0], hit[1]) for ev, hit in zip(pool, near.best_for(vecs))
                 if hit is not None and hit[1] >= threshold]
        if not found:
            break
        step = max(1, settings.max_ops_per_plan)
        for i in range(0, len(found), step):
            ops: list[Operation] = [AddEdge(src=ev, dst=cid, type=EdgeType.REINFORCES,
                           reasoning=f"consolidation: the event corroborates the concept "
                                     f"(cosine {cos:.2f} ≥ {threshold:.2f})")
                   for ev, cid, cos in found[i:i + step]]
            execute(UpdatePlan(plan_id=stamp.plan_id, namespace=graph.namespace,
                               planner="consolidate", reasoning="accumulation",
                               operations=ops), graph, settings, at=stamp.at)
        near.invalidate()
        result.reinforced += len(found)
        result.attached += [(ev, cid) for ev, cid, _ in found]
        attached = {ev for ev, _, _ in found}
        pool = [e for e in pool if e not in attached]
    return result
