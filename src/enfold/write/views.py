"""Reading a holder's claims in the graph: who holds one, when it was made, whether it is
still current, which way it leans, and whether an event turns against one.

These are shared by the local planner (:func:`turned_view`, when an event is folded) and
claim reconciliation (:mod:`enfold.consolidate.claims`), so they live below both.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable
from typing import Any

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import EdgeType, Node, NodeKind
from enfold.settings import Settings
from enfold.text.claims import target_key
from enfold.text.phrases import STOPWORDS, tokens
from enfold.text.polarity import polarity, positive_probability
from enfold.text.stance import held_still

__all__ = ["SIGN", "held", "holder_of", "lean", "opposite", "same_thing", "superseded",
           "thing_words", "turned_view", "valid_from"]


def holder_of(graph: WorkingGraph, claim: Node) -> str:
    """The holder's person id, or ``"name:<holder>"`` when no HOLDS edge names one."""
    people = sorted(e.src for e in graph.in_edges(claim.id) if e.type is EdgeType.HOLDS)
    if people:
        return people[0]
    return "name:" + " ".join(str(claim.attrs.get("holder") or "").lower().split())


def valid_from(graph: WorkingGraph, claim: Node) -> float:
    """When the claim was made, on the stream's clock."""
    value = claim.attrs.get("valid_from")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    times = [graph.nodes[e.dst].ts for e in graph.out_edges(claim.id)
             if e.type is EdgeType.SUPPORTED_BY and e.dst in graph.nodes]
    return min(times) if times else claim.created_at


def superseded(graph: WorkingGraph, claim: Node) -> bool:
    by = claim.attrs.get("superseded_by")
    return isinstance(by, str) and graph.resolve(by) in graph.nodes


#: The lean of a stance the reading gave.
SIGN = {"positive": 1.0, "negative": -1.0}


def lean(graph: WorkingGraph, claim: Node, embedder: str | None) -> float:
    """The claim's lean in [-1, 1]: +1 or -1 for the stance the reading gave it; for one it
    left neutral, ``2p - 1`` with ``p`` the polarity model's probability that its utterance
    leans for its target (:func:`enfold.text.polarity.positive_probability`), 0 without
    a model for this embedder or a vector."""
    stance = claim.attrs.get("stance") or "neutral"
    if stance in SIGN:
        return SIGN[stance]
    probabilities = [p for p in (
        positive_probability(graph.event_vectors.get(e.dst), embedder)
        for e in graph.out_edges(claim.id) if e.type is EdgeType.SUPPORTED_BY)
        if p is not None]
    if not probabilities:
        return 0.0
    return 2.0 * float(np.mean(probabilities)) - 1.0


def opposite(lean: float, other: float, gap: float) -> bool:
    """Whether two leans are opposite stances: of opposite signs, ``gap`` or more apart."""
    return lean * other < 0 and abs(lean - other) >= gap


def thing_words(text: str) -> set[str]:
    """The words of ``text`` that can name a thing, each keyed as a claim's target is
    (:func:`~enfold.text.claims.target_key`: lowercased, possessive off, singular: "the
    neighbours'" and "neighbour" meet, so do "companies" and "company"); not stop words,
    not numbers."""
    out = set()
    for tok in tokens(text):
        if tok.lower() in STOPWORDS:
            continue
        key = target_key(tok)
        if len(key) >= 3 and (key.isalpha() or "-" in key):
            out.add(key)
    return out


def same_thing(target: str, words: str, other_target: str, other_words: str) -> bool:
    """Whether two views are about one thing by their words: a word of either's target is
    among the other's words ("my season ticket" and "renewed the season ticket"). How alike
    two whole utterances are cannot tell it: in a diary or a work log, entries about
    different things are as alike as two takes on one."""
    return bool(thing_words(target) & thing_words(other_words)
                or thing_words(other_target) & thing_words(words))


def held(graph: WorkingGraph, holder: str, claims: Iterable[str]) -> list[str]:
    """The claims of ``holder`` (a person id: through its HOLDS edges, so the cost follows
    the holder's claims, not the namespace's; a bare name: by scanning)."""
    if holder.startswith("name:"):
        return [c for c in claims if holder_of(graph, graph.nodes[c]) == holder]
    kinds = graph.by_kind[NodeKind.CLAIM]
    return [e.dst for e in graph.out_edges(holder)
            if e.type is EdgeType.HOLDS and e.dst in kinds]


def turned_view(graph: WorkingGraph, event: Node, vector: Any, speaker: str | None,
                settings: Settings, *, embedder: str | None = None,
                limit: int = 200) -> tuple[Node, str] | None:
    """A view the speaker reverses by what they report, not by what they say they think
    ("I think the climbing gym on Dock Street is overpriced", later "renewed my Dock
    Street membership for another year"): the speaker's current claim, among their
    ``limit`` most recent, that ``event`` (which holds no claim of its own) turns against,
    and the stance it now takes; None when there is none.

    The event must lean one way by the polarity model's own calibrated reading
    (:func:`enfold.text.polarity.polarity`), that lean must be opposite to the claim's
    (:func:`lean`, ``claim_lean_gap`` apart), and the two utterances as alike as an
    opposite claim must be to supersede (``claim_opposite_similarity``): the same bars a
    change of stance between two claims meets, so an account that merely leans is no view.
    And the account must name the view's thing: a word of the claim's target among its
    words (:func:`same_thing`; in a diary, an entry that leans the other way is as alike
    to a dozen views of other things)."""
    if speaker is None or vector is None:
        return None
    side = polarity(vector, embedder)
    if side is None:
        return None
    mine = SIGN[side]
    claims = graph.by_kind[NodeKind.CLAIM]
    recent = heapq.nlargest(limit, (c for c in held(graph, speaker, claims) if c in graph.nodes),
                            key=lambda c: valid_from(graph, graph.nodes[c]))
    norm = float(np.linalg.norm(vector)) or 1.0
    best: tuple[float, Node] | None = None
    for cid in recent:
        claim = graph.nodes[cid]
        if superseded(graph, claim) or valid_from(graph, claim) >= event.ts \
                or claim.attrs.get("revises") \
                or not opposite(mine, lean(graph, claim, embedder), settings.claim_lean_gap) \
                or not same_thing(str(claim.attrs.get("target") or ""), "", "", event.text):
            continue
        for e in graph.out_edges(cid):
            v = graph.event_vectors.get(e.dst) if e.type is EdgeType.SUPPORTED_BY else None
            if v is None:
                continue
            sim = float(v @ vector) / ((float(np.linalg.norm(v)) or 1.0) * norm)
            if sim >= settings.claim_opposite_similarity and (best is None or sim > best[0]):
                best = (sim, claim)
    if best is None or _goes_on(event.text, str(best[1].attrs.get("target") or "")):
        return None
    return best[1], side


def _goes_on(text: str, target: str) -> bool:
    """Whether a sentence of ``text`` that names ``target`` says it holds still ("too
    high still"): an account that says the view goes on does not turn against it."""
    from enfold.text.nlp import parse

    doc = parse(text)
    words = thing_words(target)
    return doc is not None and any(held_still(sent) for sent in doc.sents
                                   if words & thing_words(sent.text))
