"""The recall controller: composes the operators from the query analysis (SPEC §8.3).

Rule-based and deterministic. Every step is recorded (operator, inputs, how many items it
produced) and every returned item carries the path of operators that produced it.

Evidence events are ranked by reciprocal-rank fusion of up to five signals: lexical and
dense anchors on events; events grounding the concepts, facts and claims that anchor on the
query; a typed traversal from the named people; and, for attribution questions, the
utterances behind the holder's claims. Neighbouring turns of the best evidence are added
with a lower score, because the answer to a question often sits one turn away from the
words it shares with the question.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import EdgeType, NodeKind
from enfold.recall.analyze import QueryAnalysis
from enfold.recall.operators import (
    Scores,
    anchor,
    ground,
    in_window,
    intersect,
    ranked,
    rrf,
    traverse,
)
from enfold.recall.pack import ContextPack, Item
from enfold.settings import Settings

Lexical = Callable[[str, Iterable[NodeKind], int], list[tuple[str, float]]]
NEIGHBOUR_SHARE = 0.5  # neighbouring turns rank well below the turn they neighbour
NEIGHBOUR_SOURCES = 5  # only the best evidence brings its neighbours
FACT_MARGIN = 0.0  # among the top three, a plain account always goes before an opinion
_DERIVED = (NodeKind.CONCEPT, NodeKind.FACT, NodeKind.CLAIM, NodeKind.INTENT)


@dataclass
class _Signals:
    lists: list[list[str]]
    weights: list[float]
    paths: dict[str, list[str]]

    def add(self, name: str, scores: Scores, weight: float = 1.0, limit: int = 100) -> None:
        order = ranked(scores)[:limit]
        if not order:
            return
        self.lists.append(order)
        self.weights.append(weight)
        for node_id in order:
            self.paths.setdefault(node_id, []).append(name)


def _seq_index(graph: WorkingGraph) -> dict[int, str]:
    # (speed, issue 23: the graph keeps this index as events come and go, where a rebuild
    # over every event followed each new one)
    return graph.events_by_seq


def recall(
    graph: WorkingGraph,
    lexical: Lexical,
    analysis: QueryAnalysis,
    qvec: np.ndarray | None,
    settings: Settings,
    *,
    k: int = 10,
    neighbours: bool = True,
) -> ContextPack:
    """Run the operators for one query and assemble the ContextPack."""
    q = analysis.query
    pack = ContextPack(query=q)
    sig = _Signals([], [], {})
    win = analysis.window

    events_anchor = anchor(graph, lexical, q, qvec, [NodeKind.EVENT], rrf_k=settings.rrf_k,
                           lexical_weight=2.0)
    events_anchor = {e: s for e, s in events_anchor.items() if in_window(graph, e, win)}
    pack.steps.append({"op": "anchor", "kinds": ["event"], "found": len(events_anchor)})
    sig.add("anchor:event", events_anchor, weight=2.0)

    derived = anchor(graph, lexical, q, qvec, _DERIVED, rrf_k=settings.rrf_k)
    pack.steps.append({"op": "anchor", "kinds": [k.value for k in _DERIVED],
                       "found": len(derived)})
    top_derived = dict(sorted(derived.items(), key=lambda x: -x[1])[:10])
    grounded = ground(graph, top_derived, qvec=qvec, window=win)  # (bounded: issue 23)
    if qvec is not None and grounded:
        sims = graph.event_vectors.similarities(qvec, grounded)
        grounded = {e: s * (0.5 + 0.5 * max(0.0, sims.get(e, 0.0))) for e, s in grounded.items()}
    grounded = {e: s for e, s in grounded.items() if in_window(graph, e, win)}
    pack.steps.append({"op": "ground", "from": len(top_derived), "events": len(grounded)})
    sig.add("anchor:derived>ground", grounded, weight=1.0, limit=50)

    people = [p for p in (_person(graph, name) for name in analysis.people) if p]
    if people:
        seeds = {p: 1.0 for p in people}
        reach = traverse(graph, seeds, edge_types=(EdgeType.PARTICIPATES, EdgeType.MENTIONS),
                         hops=1, decay=settings.traverse_decay, ppr_blend=settings.ppr_blend,
                         window=win)
        person_events = {e: s * events_anchor.get(e, 0.0) for e, s in reach.items()
                         if e in graph.by_kind[NodeKind.EVENT] and e in events_anchor}
        pack.steps.append({"op": "traverse", "from": analysis.people, "events": len(reach)})
        sig.add("traverse:person", person_events, weight=1.0, limit=50)
        if analysis.comparison and len(people) >= 2:
            shared = intersect(graph, {people[0]: 1.0}, {people[1]: 1.0})
            pack.steps.append({"op": "intersect", "between": analysis.people[:2],
                               "found": len(shared)})
            sig.add("intersect", {n: s for n, s in shared.items()
                                  if n in graph.by_kind[NodeKind.EVENT]}, weight=0.5)

    claims = _claims(graph, analysis, derived)
    if claims:
        pack.steps.append({"op": "ground", "claims_of": analysis.holder, "claims": len(claims)})
        sig.add("claims>ground", ground(graph, claims), weight=2.0)

    fused = rrf(sig.lists, k=settings.rrf_k, weights=sig.weights)
    order = [e for e in ranked(fused) if e in graph.by_kind[NodeKind.EVENT]]
    evidence = order[:k]
    if neighbours and evidence:
        index = _seq_index(graph)
        extra: dict[str, float] = {}
        for e in evidence[:NEIGHBOUR_SOURCES]:
            seq = int(graph.nodes[e].attrs.get("seq", 0))
            for d in (-1, 1):
                nb = index.get(seq + d)
                if nb and nb not in fused and in_window(graph, nb, win):
                    extra[nb] = max(extra.get(nb, 0.0), fused[e] * NEIGHBOUR_SHARE)
                    sig.paths.setdefault(nb, []).append("neighbour")
        pack.steps.append({"op": "neighbours", "added": len(extra)})
        fused.update(extra)
        order = [e for e in ranked(fused) if e in graph.by_kind[NodeKind.EVENT]]
        evidence = order[:k]
    if not analysis.asks_opinion:
        evidence = _facts_first(graph, evidence, fused, sig.paths)
    pack.steps.append({"op": "fuse", "signals": len(sig.lists), "evidence": len(evidence)})

    pack.evidence = [_item(graph, e, fused[e], sig.paths.get(e, [])) for e in evidence]
    for node_id in ranked(derived)[: 2 * k]:
        node = graph.nodes[node_id]
        item = _item(graph, node_id, derived[node_id], ["anchor:derived"])
        {NodeKind.CONCEPT: pack.concepts, NodeKind.FACT: pack.facts,
         NodeKind.INTENT: pack.intents}.get(node.kind, []).append(item)
    pack.claims = [_item(graph, c, s, ["claims"]) for c, s in
                   sorted(claims.items(), key=lambda x: -x[1])[:k]]
    for lst in (pack.concepts, pack.facts, pack.intents):
        del lst[k:]
    return pack


def _facts_first(graph: WorkingGraph, evidence: list[str], fused: Scores,
                 paths: dict[str, list[str]]) -> list[str]:
    """For a question about what happened, a plain account outranks a nearby opinion.

    CogMem's semantic-collapse guard, applied as a local reordering: when the best evidence
    is someone's view and a claim-free utterance is among the top three (scoring at least
    ``FACT_MARGIN`` of it), the plain account goes first. Only the order within the top
    three changes, so recall@k for k ≥ 3 is untouched and opinions stay in the evidence
    (in conversations they are often what a question is about). A blanket demotion of
    claim-bearing turns cost 3.7 points of LoCoMo recall@10; this costs none.
    """
    if not evidence or not _is_opinion(graph, evidence[0]):
        return evidence
    top = fused[evidence[0]]
    for i, e in enumerate(evidence[1:3], 1):
        if not _is_opinion(graph, e) and fused[e] >= FACT_MARGIN * top:
            paths.setdefault(e, []).append("fact-before-opinion")
            return [e, *evidence[:i], *evidence[i + 1:]]
    return evidence


def _is_opinion(graph: WorkingGraph, event_id: str) -> bool:
    """Whether an event is the utterance of a claim (a claim rests on it)."""
    return any(e.type is EdgeType.SUPPORTED_BY and e.src in graph.by_kind[NodeKind.CLAIM]
               for e in graph.in_edges(event_id))


def _person(graph: WorkingGraph, name: str) -> str | None:
    from enfold.write.people import same_person

    for pid in graph.of_kind(NodeKind.PERSON):
        if same_person(graph.nodes[pid].text, name):
            return pid
    return None


def _claims(graph: WorkingGraph, analysis: QueryAnalysis, derived: Scores) -> Scores:
    """Claims relevant to the query; for attribution, only the named holder's."""
    scores = {c: s for c, s in derived.items() if c in graph.by_kind[NodeKind.CLAIM]}
    if analysis.holder:
        holder = _person(graph, analysis.holder)
        # (speed, issue 23: the holder's edges to other derived nodes, not its every
        # edge: a speaker participates in every event it said)
        held = {o for o, e in graph.links(holder) if e.src == holder} if holder else set()
        base = min(scores.values(), default=0.01) * 0.5
        scores = {c: scores.get(c, base) for c in held if c in graph.by_kind[NodeKind.CLAIM]}
    elif not analysis.asks_opinion:
        scores = {}
    return scores


def _item(graph: WorkingGraph, node_id: str, score: float, path: list[str]) -> Item:
    node = graph.nodes[node_id]
    a = node.attrs
    return Item(
        id=node.id, kind=node.kind.value, text=node.text, score=score,
        path=tuple(dict.fromkeys(path)),
        ts=node.ts if node.kind is NodeKind.EVENT else a.get("valid_from") or a.get("last"),
        source=a.get("source") if node.kind is NodeKind.EVENT else None,
        holder=a.get("holder") if node.kind is NodeKind.CLAIM else None,
        external_id=a.get("external_id") if node.kind is NodeKind.EVENT else None,
        attrs={k: a[k] for k in ("predicate", "stance", "superseded_by", "category", "status")
               if k in a and a[k] is not None},
    )
