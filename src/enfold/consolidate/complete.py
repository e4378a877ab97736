"""Completion: concepts with no edge to any other concept get RELATED_TO their nearest
concepts (kNN completion).

kNN over concept centroids: the ``knn_k`` nearest concepts whose cosine reaches
``knn_min_cosine``. CogniFold's text calls these GROUNDS edges, which the ontology reserves
for event → derived node; the reference code uses RELATED_TO, and so does enfold. The new
edge goes from the orphan to its neighbour with the ontology's prior weight, stamped with the
pass (so decay counts its age from now), and is recorded in the op log under both ends.
A concept with no neighbour close enough stays as it is; a second pass finds the same
nothing, so completion reaches a fixed point.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from enfold.consolidate.centroids import ConceptCentroids
from enfold.consolidate.clock import Stamp
from enfold.graph import WorkingGraph
from enfold.model import ONTOLOGY, Edge, EdgeType, NodeKind
from enfold.settings import Settings


@dataclass
class CompleteResult:
    linked: int = 0  # RELATED_TO edges added
    orphans: int = 0  # concepts found with no concept neighbour
    visited: int = 0  # concepts examined


#: Edge types that can join two concepts (from the ontology).
_CONCEPT_TO_CONCEPT = tuple(t for t, r in ONTOLOGY.items()
                            if NodeKind.CONCEPT in r.sources and NodeKind.CONCEPT in r.targets)


def has_concept_neighbour(graph: WorkingGraph, cid: str) -> bool:
    """True when an edge joins ``cid`` to another concept, in either direction (read from
    the graph's index of edges between non-event nodes: a concept's thousands of event
    edges are not walked)."""
    concepts = graph.by_kind[NodeKind.CONCEPT]
    return any(other in concepts and other != cid
               for other, _ in graph.links(cid, _CONCEPT_TO_CONCEPT))


def complete(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    *,
    region: Iterable[str] | None = None,
    centroids: ConceptCentroids | None = None,
) -> CompleteResult:
    """Link the orphan concepts of ``region`` (all concepts when None) to their kNN.
    Runs inside an open graph transaction."""
    result = CompleteResult()
    concepts = graph.by_kind[NodeKind.CONCEPT]
    todo = sorted(concepts) if region is None else sorted(
        {graph.resolve(x) for x in region} & concepts.keys())
    prior = ONTOLOGY[EdgeType.RELATED_TO].prior
    near = centroids if centroids is not None else ConceptCentroids(graph)
    for cid in todo:
        result.visited += 1
        if has_concept_neighbour(graph, cid):
            continue
        result.orphans += 1
        vec = graph.node_vectors.get(cid)
        if vec is None:
            continue
        hits = near.nearest(vec, settings.knn_k, accept=cid.__ne__)
        for other, cos in hits:
            if cos < settings.knn_min_cosine:
                break
            if graph.edge(cid, EdgeType.RELATED_TO, other) or graph.edge(
                    other, EdgeType.RELATED_TO, cid):
                continue
            edge = Edge(graph.namespace, cid, other, EdgeType.RELATED_TO, prior, stamp.at,
                        stamp.at, stamp.plan_id)
            graph.put_edge(edge)
            reason = (f"completion: {graph.nodes[cid].text!r} had no related concept; "
                      f"nearest by centroid (cosine {cos:.2f} ≥ {settings.knn_min_cosine})")
            stamp.op(graph, "ADD_EDGE", cid, None, edge.summary(), reason, peer=other)
            result.linked += 1
    return result
