"""The four retrieval operators: anchor, traverse, intersect, ground (CogMem's toolkit).

Each is a plain function over the working graph returning ``{node id: score}``:

* :func:`anchor` — hybrid lexical (FTS5 BM25) + dense search fused by reciprocal rank,
  constrained by node kind;
* :func:`traverse` — typed breadth-first expansion with a decay per hop, blended with a
  personalized PageRank from the seeds, and an optional temporal gate on events;
* :func:`intersect` — what two anchor sets share in their neighbourhoods;
* :func:`ground` — from derived nodes back to the source events they rest on.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import ONTOLOGY, Edge, EdgeType, NodeKind
from enfold.settings import Settings

Scores = dict[str, float]
HUB_SCAN: int = Settings.traverse_hub_scan  # traverse's default (recall passes the setting)
# ground()'s defaults are the settings' (recall passes the caller's settings)
GROUND_PER_NODE: int = Settings.ground_per_node
GROUND_SCAN: int = Settings.ground_scan
GROUND_MAX_NODES: int = Settings.ground_max_nodes
_GROUNDING = frozenset((EdgeType.GROUNDS, EdgeType.REINFORCES, EdgeType.SUPPORTED_BY,
                        EdgeType.TRIGGERS, EdgeType.USER_FEEDBACK))


def rrf(rankings: Sequence[Sequence[str]], k: int = 60,
        weights: Sequence[float] | None = None) -> Scores:
    """Reciprocal rank fusion: Σ w / (k + rank)."""
    out: Scores = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else weights[i]
        for rank, node_id in enumerate(ranking, 1):
            out[node_id] = out.get(node_id, 0.0) + w / (k + rank)
    return out


def ranked(scores: Mapping[str, float]) -> list[str]:
    return sorted(scores, key=lambda x: (-scores[x], x))


def anchor(
    graph: WorkingGraph,
    lexical: Callable[[str, Iterable[NodeKind], int], list[tuple[str, float]]],
    query: str,
    qvec: np.ndarray | None,
    kinds: Iterable[NodeKind],
    *,
    depth: int = 50,
    rrf_k: int = 60,
    lexical_weight: float = 1.0,
    dense: list[str] | None = None,
) -> Scores:
    """Hybrid search restricted to ``kinds``: BM25 and dense rankings fused by RRF.
    ``dense``: the dense ranking when already found (:func:`anchor_dense`)."""
    kinds = frozenset(kinds)
    if dense is None:
        dense = anchor_dense(graph, qvec, kinds, depth=depth)
    lex = [i for i, _ in lexical(query, kinds, depth) if i in graph.nodes]
    return rrf([lex, dense], k=rrf_k, weights=(lexical_weight, 1.0))


def anchor_dense(graph: WorkingGraph, qvec: np.ndarray | None, kinds: Iterable[NodeKind], *,
                 depth: int = 50) -> list[str]:
    """:func:`anchor`'s dense ranking: the nodes of ``kinds`` nearest to ``qvec``."""
    kinds = frozenset(kinds)
    dense: list[str] = []
    if qvec is not None:
        def accept(node_id: str) -> bool:
            node = graph.nodes.get(node_id)
            return node is not None and node.kind in kinds

        if NodeKind.EVENT in kinds:
            dense += [i for i, _ in graph.event_vectors.search(qvec, depth, accept=accept)]
        derived = [k for k in kinds if k is not NodeKind.EVENT]
        if derived:  # each kind's own index, best first across kinds
            hits = [h for k in derived for h in graph.nearest(qvec, k, depth)]
            dense += [i for i, _ in sorted(hits, key=lambda h: -h[1])[:depth]]
    return dense


def in_window(graph: WorkingGraph, node_id: str, window: tuple[float, float] | None) -> bool:
    """The temporal gate: events must fall inside the window; other kinds pass."""
    if window is None:
        return True
    node = graph.nodes.get(node_id)
    if node is None or node.kind is not NodeKind.EVENT:
        return True
    return window[0] <= node.ts < window[1]


def traverse(
    graph: WorkingGraph,
    seeds: Mapping[str, float],
    *,
    edge_types: Iterable[EdgeType] | None = None,
    hops: int = 3,
    decay: float = 0.7,
    ppr_blend: float = 0.4,
    window: tuple[float, float] | None = None,
    max_nodes: int = 2000,
    max_degree: int = 200,
    hub_scan: int = HUB_SCAN,
) -> Scores:
    """Typed BFS from the seeds (score × weight × decay per hop), blended with PPR.

    Hubs are not expanded past ``max_degree`` neighbours (the strongest edges first), so a
    speaker who participates in every event does not flood the result; and for a node with
    more than ``hub_scan`` × ``max_degree`` edges (``Settings.traverse_hub_scan``), only that many of its most recent
    edges are looked at, so that expanding a hub costs the same however many events it
    has. Every step's cost is bounded by ``max_nodes``, ``max_degree`` and the hops.
    """
    allowed = None if edge_types is None else frozenset(edge_types)
    bfs: Scores = dict(seeds)
    frontier = dict(seeds)
    for _ in range(hops):
        nxt: Scores = {}
        for node_id, score in frontier.items():
            edges = [(o, e) for o, e in recent_neighbors(graph, node_id, hub_scan * max_degree)
                     if allowed is None or e.type in allowed]
            if len(edges) > max_degree:
                edges = sorted(edges, key=lambda oe: -strength(oe[1]))[:max_degree]
            for other, e in edges:
                s = score * strength(e) * decay
                if s > nxt.get(other, 0.0) and s > bfs.get(other, 0.0):
                    nxt[other] = s
        for node_id, s in nxt.items():
            bfs[node_id] = max(bfs.get(node_id, 0.0), s)
        frontier = nxt
        if len(bfs) >= max_nodes or not frontier:
            break
    ppr = personalized_pagerank(graph, seeds, list(bfs), allowed=allowed)
    top_bfs = max(bfs.values(), default=1.0) or 1.0
    top_ppr = max(ppr.values(), default=1.0) or 1.0
    out = {
        n: (1 - ppr_blend) * bfs[n] / top_bfs + ppr_blend * ppr.get(n, 0.0) / top_ppr
        for n in bfs
    }
    return {n: s for n, s in out.items() if in_window(graph, n, window)}


def recent_neighbors(graph: WorkingGraph, node_id: str, limit: int
                     ) -> Iterable[tuple[str, Edge]]:
    """A node's neighbours as :meth:`~enfold.graph.WorkingGraph.neighbors` gives them, or,
    for a node with more than ``limit`` edges, those of its ``limit`` most recently added
    edges (half from each direction, the rest from the other if one has fewer)."""
    if graph.degree(node_id) <= limit:
        return list(graph.neighbors(node_id))
    out = graph.out.get(node_id, {})
    inn = graph.inn.get(node_id, {})
    n_in = min(len(inn), max(limit // 2, limit - len(out)))
    n_out = min(len(out), limit - n_in)
    found = [(e.dst, e) for e in itertools.islice(reversed(out.values()), n_out)]
    found += [(e.src, e) for e in itertools.islice(reversed(inn.values()), n_in)]
    return found


def strength(edge: Edge) -> float:
    """An edge's weight as recall reads it: reinforcement counts, decay does not go below the
    type's prior. Decay decides what the write path keeps in mind; a question about March
    must still reach March's evidence (a time window in the query is the temporal gate)."""
    return max(edge.weight, ONTOLOGY[edge.type].prior)


def personalized_pagerank(
    graph: WorkingGraph,
    seeds: Mapping[str, float],
    nodes: Sequence[str],
    *,
    allowed: frozenset[EdgeType] | None = None,
    damping: float = 0.85,
    iterations: int = 30,
) -> Scores:
    """PPR on the subgraph induced by ``nodes``, restarting at the seeds (undirected)."""
    index = {n: i for i, n in enumerate(nodes)}
    n = len(nodes)
    if n == 0:
        return {}
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    types = tuple(EdgeType) if allowed is None else tuple(allowed)
    for node_id, i in index.items():
        out = graph.out.get(node_id, {})
        inn = graph.inn.get(node_id, {})
        if len(out) + len(inn) > 2 * n * len(types):
            # A hub: look its edges to the subgraph's nodes up, instead of walking all
            # of them (the same entries, so the same result).
            for other, at in index.items():
                for t in types:
                    for e in (out.get((t, other)), inn.get((t, other))):
                        if e is not None:
                            rows.append(i)
                            cols.append(at)
                            vals.append(strength(e))
            continue
        # (speed: the edge maps themselves, in neighbors' order: out-edges, then in-edges,
        # read by their keys, (type, the far end): a map's key names its edge's type and
        # other end, so no edge's fields are read for an edge that leaves the subgraph)
        for edges in (out, inn):
            for (t, other), e in edges.items():
                j = index.get(other)
                if j is not None and (allowed is None or t in allowed):
                    rows.append(i)
                    cols.append(j)
                    vals.append(strength(e))
    import scipy.sparse as sp

    w = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
    out_deg = np.asarray(w.sum(axis=1)).ravel()
    inv = np.where(out_deg > 0, 1.0 / np.where(out_deg > 0, out_deg, 1.0), 0.0)
    restart = np.zeros(n)
    for s, v in seeds.items():
        if s in index:
            restart[index[s]] = max(v, 0.0)
    if restart.sum() <= 0:
        return {}
    restart /= restart.sum()
    r = restart.copy()
    wt = w.T.tocsr()
    for _ in range(iterations):
        r = damping * (wt @ (r * inv)) + (1 - damping) * restart
    return {node: float(r[i]) for node, i in index.items()}


def intersect(graph: WorkingGraph, a: Mapping[str, float], b: Mapping[str, float]) -> Scores:
    """Nodes reachable in one hop from both anchor sets (shared events, concepts, people)."""
    def reach(seeds: Mapping[str, float]) -> Scores:
        out: Scores = dict(seeds)
        for node_id, score in seeds.items():
            for other, e in graph.neighbors(node_id):
                out[other] = max(out.get(other, 0.0), score * strength(e))
        return out

    ra, rb = reach(a), reach(b)
    return {n: ra[n] * rb[n] for n in ra.keys() & rb.keys()}


def ground(graph: WorkingGraph, nodes: Mapping[str, float], *,
           qvec: np.ndarray | None = None, window: tuple[float, float] | None = None,
           per_node: int | None = GROUND_PER_NODE, scan: int = GROUND_SCAN,
           max_nodes: int | None = GROUND_MAX_NODES) -> Scores:
    """Source events of derived nodes (and events themselves), scored by their node.

    A concept or a habit may rest on thousands of events. With ``per_node``, a node with
    more sources than that gives only ``per_node`` of them: among its ``scan`` most recent
    sources (in ``window``, if given), those nearest to ``qvec`` by cosine — or the most
    recent, without ``qvec``. Its cost then follows ``scan``, not the node's size.
    ``per_node=None`` gives every source (the reference). ``max_nodes``: of more nodes than
    that (the thousands of claims one person holds), only the best scored are grounded,
    the most recent first among equal scores (ids sort by creation time).
    """
    out: Scores = {}
    events = graph.by_kind[NodeKind.EVENT]
    if max_nodes is not None and len(nodes) > max_nodes:
        # (speed: the best by (score, id) in one pass, not a sort of all of them)
        nodes = {n: s for s, n in heapq.nlargest(max_nodes, ((s, n) for n, s in nodes.items()))}
    for node_id, score in nodes.items():
        node = graph.nodes.get(node_id)
        if node is None:
            continue
        if node.kind is NodeKind.EVENT:
            out[node_id] = max(out.get(node_id, 0.0), score)
            continue
        limit = None if per_node is None else max(scan, per_node)
        sources = _sources(graph, node_id, node.grounded_in, limit)
        if window is not None:
            sources = [ev for ev in sources if in_window(graph, ev, window)]
        if per_node is not None and len(sources) > per_node:
            if qvec is not None:  # nearest first, the most recent first among equals
                sims = graph.event_vectors.similarity_array(qvec, sources)
                nearest = np.argsort(-sims, kind="stable")[:per_node]
                sources = [sources[i] for i in nearest.tolist()]
            else:
                sources = sources[:per_node]
        for ev in sources:
            if ev in events:
                out[ev] = max(out.get(ev, 0.0), score)
    return out


def _sources(graph: WorkingGraph, node_id: str, provenance: Sequence[str], limit: int | None
             ) -> list[str]:
    """A derived node's source events, most recent first: its provenance and the events on
    its grounding edges; with ``limit``, only the most recent ``limit`` of each."""
    events = graph.by_kind[NodeKind.EVENT]
    prov = provenance if limit is None else provenance[-limit:]
    found: dict[str, None] = dict.fromkeys(reversed(prov))
    if limit is None or graph.degree(node_id) <= limit:
        # (speed: recent_neighbors' own order, out-edges then in-edges, without the list)
        # (the maps' keys, (type, the far end), name what is tested)
        for edges in (graph.out.get(node_id, {}), graph.inn.get(node_id, {})):
            for t, other in edges:
                if t in _GROUNDING and other in events:
                    found.setdefault(other, None)
        return list(found)
    for other, e in recent_neighbors(graph, node_id, limit):
        if e.type in _GROUNDING and other in events:
            found.setdefault(other, None)
    return list(found)
