"""Claim reconciliation: a holder's repeated or changed opinion (CogMem's claim reconciliation).

Two claims are *about the same thing* when they have

* the same holder — the person with the HOLDS edge into the claim (the ``holder`` name when
  there is none); claims of different holders never merge, never supersede;
* the same target, compared by :func:`enfold.text.claims.target_key` ("my job", "this job"
  and "jobs" all key to ``job``);
* the same **predicate family** (:func:`enfold.text.claims.predicate_family`: attitude —
  love, hate, prefer; belief — think, believe, feel, doubt, worry, hope, expect; speech — say,
  claim, argue). The spec says "same predicate"; taken literally, "I love my job" (love) and
  "I hate this job" (hate) would never meet, and a knowledge update — the very case
  reconciliation exists for — would be lost. Love and hate are two stances of one attitude,
  so enfold compares families and lets the stance tell agreement from change.

Within such a group, the claims still current (not superseded) are taken in order of
``valid_from`` (stream time). A newer claim with the **same stance** as the current one is
the holder repeating themself: it merges into the older one (:func:`merge_nodes`: the
survivor gains its evidence edges, provenance and wording as an alias; ``reaffirmed_at``
records when). A newer claim with a **different stance** supersedes the current one: the
older keeps everything and gains ``superseded_by`` (the newer id) and ``superseded_at``; the
newer gains ``supersedes``. Both stay in the graph and retrievable, and the op log records
the supersession (``SUPERSEDE``), so ``history()`` tells the story of the change.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from enfold.consolidate.clock import Stamp
from enfold.graph import WorkingGraph
from enfold.model import ONTOLOGY, Edge, EdgeType, Node, NodeKind, new_id
from enfold.settings import Settings
from enfold.text.claims import names_nothing, predicate_family, target_key
from enfold.text.people import same_person
from enfold.text.polarity import polarity
from enfold.text.speakers import speaker_name
from enfold.text.stance import held_still
from enfold.write.apply import merge_nodes, node_diff
from enfold.write.naming import ThemeNamer
from enfold.write.people_index import PeopleIndex
from enfold.write.views import held as _held
from enfold.write.views import holder_of, opposite, same_thing, thing_words, valid_from
from enfold.write.views import lean as _lean
from enfold.write.views import superseded as _superseded

ClaimKey = tuple[str, str, str]  # (holder, target key, predicate family)


@dataclass
class ClaimResult:
    merged: int = 0
    superseded: int = 0
    visited: int = 0  # claims examined


def claim_key(graph: WorkingGraph, claim: Node) -> ClaimKey:
    a = claim.attrs
    tkey = a.get("target_key") or target_key(str(a.get("target") or claim.text))
    if names_nothing(str(tkey)):
        # "I think it's perfect", later "I think it's helped": "it" is no shared thing
        tkey = target_key(claim.text)
    return (holder_of(graph, claim), str(tkey),
            predicate_family(str(a.get("predicate") or "think")))


@dataclass
class ClaimIndex:
    """Claim ids by :data:`ClaimKey`; rebuildable, checked against the graph when read."""

    groups: dict[ClaimKey, list[str]] = field(default_factory=dict)

    @classmethod
    def build(cls, graph: WorkingGraph) -> ClaimIndex:
        index = cls()
        for cid in graph.of_kind(NodeKind.CLAIM):
            index.add(graph, cid)
        return index

    def add(self, graph: WorkingGraph, claim_id: str) -> ClaimKey | None:
        node = graph.nodes.get(claim_id)
        if node is None or node.kind is not NodeKind.CLAIM:
            return None
        key = claim_key(graph, node)
        lst = self.groups.setdefault(key, [])
        if claim_id not in lst:
            lst.append(claim_id)
        return key

    def members(self, graph: WorkingGraph, key: ClaimKey) -> list[Node]:
        ids = dict.fromkeys(graph.resolve(c) for c in self.groups.get(key, []))
        found = [graph.nodes[c] for c in ids if c in graph.by_kind[NodeKind.CLAIM]]
        found = [n for n in found if claim_key(graph, n) == key]
        self.groups[key] = [n.id for n in found]
        return found


#: How far from 0 the polarity model's lean of a claim the reading left neutral must be
#: before it counts against a polar claim of the same target: its probability outside
#: [0.25, 0.75].
_UNDECIDED = 0.5


def reconcile_group(graph: WorkingGraph, stamp: Stamp, index: ClaimIndex, key: ClaimKey,
                    result: ClaimResult, *, embedder: str | None = None,
                    gap: float = 1.0) -> None:
    """Merge repeats and record changes of stance among one group's current claims.
    A stance the reading left neutral beside a polar one is no change by itself ("coffee
    after 3pm ruins my sleep", "confirmed again, coffee after 3 = no sleep"): the two
    differ only when their leans (:func:`_lean`, the polarity model's for the neutral one)
    are opposite by ``gap`` and the neutral one's lean is beyond ``±_UNDECIDED`` (the model
    decided); otherwise the newer repeats the older."""
    members = index.members(graph, key)
    result.visited += len(members)
    current_claims = sorted((n for n in members if not _superseded(graph, n)),
                            key=lambda n: (valid_from(graph, n), n.created_at, n.id))
    current: Node | None = None
    for nxt in current_claims:
        if current is None:
            current = nxt
            continue
        stance, new_stance = (current.attrs.get("stance") or "neutral",
                              nxt.attrs.get("stance") or "neutral")
        when = valid_from(graph, nxt)
        repeat = stance == new_stance or ("neutral" in (stance, new_stance) and not opposite(
            _lean(graph, current, embedder), _lean(graph, nxt, embedder), gap + _UNDECIDED))
        if not repeat and not nxt.attrs.get("revises") and _said_still(graph, nxt):
            repeat = True  # "still think ...": the view goes on, whatever the readings say
        if repeat and not nxt.attrs.get("revises"):
            merge_nodes(graph, current.id, nxt.id, at=stamp.at, plan_id=stamp.plan_id,
                        reasoning=f"consolidation: {key[0]} repeats a {stance} "
                                  f"{key[2]} about {key[1]!r}")
            kept = graph.nodes[current.id]
            polar = stance if stance != "neutral" else new_stance
            attrs = {**kept.attrs, "stance": polar, "reaffirmed_at": max(
                when, float(kept.attrs.get("reaffirmed_at") or 0.0)),
                "support": len(kept.grounded_in)}
            current = kept.with_changes(attrs=attrs)
            graph.put_node(current)
            before, after = node_diff(kept, current)
            stamp.op(graph, "UPDATE_NODE", current.id, before, after,
                     "consolidation: the claim was made again")
            result.merged += 1
            continue
        reason = (f"consolidation: {key[0]}'s {key[2]} about {key[1]!r} changed from "
                  f"{stance} to {new_stance}" if stance != new_stance else
                  f"consolidation: {key[0]} says their {key[2]} about {key[1]!r} changed")
        current = supersede(graph, stamp, current, nxt, reason)
        result.superseded += 1


def supersede(graph: WorkingGraph, stamp: Stamp, current: Node, nxt: Node, reason: str,
              *, link_newer: bool = True) -> Node:
    """Record that ``nxt`` supersedes ``current`` (both kept); the updated newer claim.
    ``link_newer=False`` leaves the newer claim's ``supersedes`` (the view it changed) as
    it is: ``current`` only restated that view."""
    when = valid_from(graph, nxt)
    old = current.with_changes(attrs={**current.attrs, "superseded_by": nxt.id,
                                      "superseded_at": when}, updated_at=stamp.at)
    graph.put_node(old)
    stamp.op(graph, "SUPERSEDE", old.id,
             {"superseded_by": None, "stance": current.attrs.get("stance")},
             {"superseded_by": nxt.id, "superseded_at": when}, reason)
    if not link_newer:
        return nxt
    new = nxt.with_changes(attrs={**nxt.attrs, "supersedes": current.id}, updated_at=stamp.at)
    graph.put_node(new)
    before, after = node_diff(nxt, new)
    stamp.op(graph, "UPDATE_NODE", new.id, before, after, reason)
    return new


def _utterance_similarity(graph: WorkingGraph, a: Node, b: Node) -> float:
    def vecs(n: Node) -> list[Any]:
        out = []
        for e in graph.out_edges(n.id):
            if e.type is EdgeType.SUPPORTED_BY:
                v = graph.event_vectors.get(e.dst)
                if v is not None:
                    out.append(v)
        return out

    best = -1.0
    for u in vecs(a):
        for v in vecs(b):
            nu, nv = float(np.linalg.norm(u)), float(np.linalg.norm(v))
            if nu and nv:
                best = max(best, float(u @ v) / (nu * nv))
    return best


_SENTENCE_END = re.compile(r"[.!?]+(?:\s|$)")


def _words_of_view(text: str, target: str, most: int = 2) -> str:
    """The words a claim's thing is looked for in: its own words, or only its target when
    they run to more than ``most`` sentences (a diary entry read whole as one view names a
    dozen things besides the one the view is about)."""
    return target if len(_SENTENCE_END.findall(text.strip())) > most else text


def _names_a_thing(claim: Node) -> bool:
    """Whether a claim's target holds a noun or a name ("the bypass", not "loved it too")."""
    from enfold.text.nlp import parse

    doc = parse(str(claim.attrs.get("target") or ""))
    return doc is not None and any(t.pos_ in ("NOUN", "PROPN") for t in doc)


def _said_still(graph: WorkingGraph, claim: Node) -> bool:
    """Whether the sentence a claim was read from says the view holds still ("Still
    think the charges are robbery": the claim's words are "the charges are robbery"). The
    event's own parse is read (the write path's, cached); a claim whose words are not found
    in its event is read alone."""
    from enfold.text.nlp import parse

    for e in graph.out_edges(claim.id):
        event = graph.nodes.get(e.dst) if e.type is EdgeType.SUPPORTED_BY else None
        if event is None:
            continue
        at = event.text.find(claim.text) if claim.text else -1
        doc = parse(event.text) if at >= 0 else None
        span = None if doc is None else doc.char_span(at, at + len(claim.text),
                                                      alignment_mode="expand")
        if span is not None and len(claim.text) < len(event.text):
            return any(held_still(sent) for sent in {t.sent.start: t.sent for t in span}.values())
        if at >= 0:
            break
    return held_still(claim.text)


def _pronoun_for(graph: WorkingGraph, claim: Node, naming: frozenset[str]) -> bool:
    """Whether ``claim``'s target is a bare pronoun ("it", "that") and the words from the
    start of the sentence before the claim's own to the claim's end name the thing a change
    of mind names: "The new phone ban starts today. I think it's pointless" is a view of the
    phone ban. (Further back, "it" is as likely to be something else the entry spoke of.)"""
    key = str(claim.attrs.get("target_key") or target_key(str(claim.attrs.get("target") or "")))
    if not names_nothing(key) or not claim.text.strip():
        return False
    for e in graph.out_edges(claim.id):
        if e.type is not EdgeType.SUPPORTED_BY or e.dst not in graph.nodes:
            continue
        text = graph.nodes[e.dst].text
        at = text.find(claim.text.strip())
        if at < 0:
            continue
        starts = [0, *(m.end() for m in _SENTENCE_END.finditer(text, 0, at))]
        if naming & thing_words(text[starts[-2] if len(starts) > 1 else 0:
                                     at + len(claim.text.strip())]):
            return True
    return False


def _head(claim: Node) -> str:
    """The head word of a claim's target; "" when it names nothing ("it", "that")."""
    key = str(claim.attrs.get("target_key") or target_key(str(claim.attrs.get("target") or "")))
    head = key.split()[-1] if key.split() else ""
    return "" if names_nothing(head) else head


def earlier_view(graph: WorkingGraph, stamp: Stamp, new: Node, settings: Settings, *,
                 embedder: str | None = None, limit: int = 200,
                 naming: frozenset[str] = frozenset(),
                 skip: frozenset[str] | None = None) -> tuple[float, Node] | None:
    """The view a change of mind ends when no claim of its holder was read from it: the
    holder's earlier words ("I want to paint the kitchen yellow", later "changed my mind
    about the kitchen: yellow would be too loud") that the reading took for no view, a
    wish or a plan being no opinion by itself. Among the ``limit`` most recent events the
    holder said or is named in, before ``new`` and holding no claim of that holder, the one whose words are most
    alike to ``new``'s, at least ``claim_opposite_similarity`` (the bar of a change told
    by an opposite stance alone, higher than that of a claim that says it changed,
    because these words were not read as a view), becomes a claim of the holder on
    ``new``'s target: the stance the polarity model reads in it when that is not
    ``new``'s own, else the opposite of ``new``'s. The claim is returned with the
    similarity (None: no such words); the caller supersedes it. ``naming``: the thing
    words of what a change names; only words that name it are read, at the lower bar of a
    change that says so (``claim_revision_similarity``). ``skip``, for the sweep of a named
    change (:func:`revise`): the events holding a view of the thing, not read; the other
    events are read whatever views of other things they hold, only those the holder said,
    at the bar of an opposite stance."""
    holder = holder_of(graph, new)
    if holder.startswith("name:") or holder not in graph.nodes:
        return None
    when = valid_from(graph, new)
    own = {e.dst for e in graph.out_edges(new.id) if e.type is EdgeType.SUPPORTED_BY}
    said = [e.dst for e in graph.out_edges(holder) if e.type is EdgeType.PARTICIPATES]
    named = [] if skip is not None else [e.src for e in graph.in_edges(holder)
                                         if e.type is EdgeType.MENTIONS]
    events = heapq.nlargest(limit, (
        e for e in dict.fromkeys([*said, *named]) if e in graph.nodes and e not in own
        and (skip is None or e not in skip)
        and graph.nodes[e].kind is NodeKind.EVENT and graph.nodes[e].ts < when),
        key=lambda e: graph.nodes[e].ts)
    mine = [u / (float(np.linalg.norm(u)) or 1.0)
            for u in (graph.event_vectors.get(e) for e in own) if u is not None]
    claims = graph.by_kind[NodeKind.CLAIM]
    need = settings.claim_revision_similarity if naming and skip is None \
        else settings.claim_opposite_similarity
    best: tuple[float, str] | None = None
    for ev in events:
        # Words that hold a view of the holder were read already, unless the sweep skips
        # those with a view of the thing, so that the views left are of other things
        if skip is None and any(e.type is EdgeType.SUPPORTED_BY and e.src in claims
                              and holder_of(graph, graph.nodes[e.src]) == holder
                              for e in graph.in_edges(ev)):
            continue
        if naming and not naming & thing_words(graph.nodes[ev].text):
            continue
        v = graph.event_vectors.get(ev)
        if v is None:
            continue
        nv = float(np.linalg.norm(v)) or 1.0
        sim = max((float(u @ v) / nv for u in mine), default=-1.0)
        if sim >= need and (best is None or sim > best[0]):
            best = (sim, ev)
    if best is None:
        return None
    ev = best[1]
    event = graph.nodes[ev]
    a = new.attrs
    read = polarity(graph.event_vectors.get(ev), embedder)
    now = a.get("stance") or "neutral"
    stance = read if read is not None and read != now else \
        {"positive": "negative", "negative": "positive"}.get(str(now), "neutral")
    attrs: dict[str, Any] = {
        "holder": a.get("holder"), "predicate": a.get("predicate") or "think",
        "stance": stance, "target": a.get("target"), "target_key": a.get("target_key"),
        "reported": not same_person(speaker_name(event.attrs.get("source")) or "",
                                    graph.nodes[holder].text),
        "valid_from": event.ts, "superseded_by": None, "revises": False,
        "states_facts": False}
    at = stamp.at
    claim = Node(new_id(NodeKind.CLAIM), graph.namespace, NodeKind.CLAIM, event.text[:4000],
                 attrs, (ev,), at, at, at, 0, stamp.plan_id)
    graph.put_node(claim)
    for src, type_, dst in ((claim.id, EdgeType.SUPPORTED_BY, ev),
                            (holder, EdgeType.HOLDS, claim.id)):
        graph.put_edge(Edge(graph.namespace, src, dst, type_, ONTOLOGY[type_].prior, at, at,
                            stamp.plan_id))
    v = graph.event_vectors.get(ev)
    if v is not None:
        graph.set_vector(claim.id, v)
    stamp.op(graph, "ADD_NODE", claim.id, None, claim.to_dict(),
             f"consolidation: the view a later claim of {a.get('holder')!r} says changed, "
             f"read from their earlier words (similarity {best[0]:.2f})")
    return best[0], claim


def revise(graph: WorkingGraph, stamp: Stamp, claim_ids: Iterable[str],
           result: ClaimResult, settings: Settings, *, embedder: str | None = None) -> None:
    """Changes of mind across targets and wordings: a newer claim that says the view
    changed, or takes the opposite stance, supersedes the same holder's most similar
    earlier claim when their utterances are alike enough (the key of
    :func:`reconcile_group` needs the same target words; people rephrase). How alike is
    the cosine of their event vectors: ``claim_revision_similarity`` for a claim that says
    the view changed ("she changed her mind", "I no longer think ...") or whose target's
    head word meets the earlier one's, ``claim_opposite_similarity`` for an opposite
    stance alone, which must also be about the same thing by its words (a word of one's
    target among the other's words, :func:`~enfold.write.views.same_thing`) or by its
    targets' meaning (``claim_target_similarity``): in a long stream, utterances about
    different things are as alike as two takes on one. An earlier claim of the ended one's
    stance at least ``claim_restatement_similarity`` alike to it is a restatement, ended too.

    Opposite stances are told by the claims' leans (:func:`_lean`): a stance the reading gave
    is ±1, and one it left neutral is read from the utterance's meaning by the polarity
    model of ``embedder``; two leans of opposite signs ``claim_lean_gap`` or more apart, each
    at least ``claim_lean_floor`` from none, are opposite ("our new neighbours seem lovely"
    and "the neighbours are a nightmare", which no evaluative word of the lexicon reads).

    A change that names its thing ("I was wrong about Piranesi") ends the holder's view of
    that thing (the same head word, a word of one target among the other's words, or "it"
    in the sentence that names the thing or the next: :func:`_pronoun_for`) before any more
    alike view, else the holder's earlier words that name it (:func:`earlier_view`). It then
    ends every other earlier view the holder still had of the thing (the same head word or
    such an "it"), whatever stance the reading gave it, except an earlier change of mind;
    the other restatements are the earlier views of the same side on that thing, not views
    of other things whose entries read alike; and the holder's own most alike entry that
    names the thing and holds no view of it is read as one, and ended (not when the change
    names only a person, nor when its group already ended a view, :func:`reconcile_group`).
    A view said to hold still ("still think ...") is no opposite stance."""
    revision = settings.claim_revision_similarity
    opposite_need = settings.claim_opposite_similarity
    restatement = settings.claim_restatement_similarity
    gap, floor = settings.claim_lean_gap, settings.claim_lean_floor
    claims = graph.by_kind[NodeKind.CLAIM]
    leans: dict[str, float] = {}

    def lean(claim: Node) -> float:
        got = leans.get(claim.id)
        if got is None:
            got = leans[claim.id] = _lean(graph, claim, embedder)
        return got

    vectors = ThemeNamer.of(graph).vectors

    def about_one_thing(a: Node, b: Node, *, named: bool = False) -> bool:
        """A word of one's target in the other's words, or two targets alike in meaning
        ("the new apartment", "the new flat"), by the namespace's phrase vectors. The
        words of a long view are its target's (:func:`_words_of_view`) unless ``named``:
        a change of mind that names its thing finds it wherever the earlier view names it."""
        ta, tb = str(a.attrs.get("target") or ""), str(b.attrs.get("target") or "")
        wa, wb = (a.text, b.text) if named else (_words_of_view(a.text, ta),
                                                 _words_of_view(b.text, tb))
        if same_thing(ta, wa, tb, wb):
            return True
        if vectors is None or not thing_words(ta) or not thing_words(tb):
            return False
        va, vb = vectors([ta, tb])
        cos = float(va @ vb) / ((float(np.linalg.norm(va)) * float(np.linalg.norm(vb))) or 1.0)
        return cos >= settings.claim_target_similarity

    for cid in dict.fromkeys(graph.resolve(c) for c in claim_ids):
        if cid not in claims:
            continue
        new = graph.nodes[cid]
        if _superseded(graph, new) or new.attrs.get("supersedes"):
            continue
        revises = bool(new.attrs.get("revises"))
        if not revises and lean(new) == 0.0:
            continue  # no lean is opposite to none
        holder = holder_of(graph, new)
        when = valid_from(graph, new)
        # A change of mind that names what changed ("I was wrong about Piranesi") ends a view
        # about that thing when its holder has one: in a long stream the holder's views of
        # other things are as alike to it by their whole words.
        naming = frozenset(thing_words(str(new.attrs.get("target") or ""))) if revises \
            else frozenset()
        named = bool(naming)
        # A change that names only a person ("I was wrong about Brandon"; a chat's "Hey
        # Maria! I'm now …", misread as a change about Maria) ends one view of them as any
        # change does, but sweeps nothing: in a conversation nearly every message names the
        # one it is addressed to, and a view read there is rarely of that person.
        sweeps = named and not all(w in PeopleIndex.of(graph).parts for w in naming)
        best: tuple[float, Node] | None = None
        on_it: tuple[float, Node] | None = None
        earlier: list[Node] = []
        for other_id in _held(graph, holder, claims):
            if other_id == cid:
                continue
            other = graph.nodes[other_id]
            if _superseded(graph, other) or holder_of(graph, other) != holder \
                    or valid_from(graph, other) >= when:
                continue
            earlier.append(other)
            if not (revises or opposite(lean(new), lean(other), gap)
                    and min(abs(lean(new)), abs(lean(other))) >= floor):
                continue
            # The same thing named two ways ("the new apartment", "this apartment"): the
            # targets' head words meet, so an opposite stance needs no more; else it needs
            # a word of one's target in the other's words, or targets alike in meaning
            # (tested last: that may embed the targets).
            same_head = _head(new) == _head(other) != ""
            sim = _utterance_similarity(graph, new, other)
            need = revision if revises or same_head else opposite_need
            if sim >= need and (best is None or sim > best[0]) \
                    and (revises or same_head or about_one_thing(new, other)):
                best = (sim, other)
            if named and sim >= need and (on_it is None or sim > on_it[0]) \
                    and (same_head or about_one_thing(new, other, named=True)
                         or _pronoun_for(graph, other, naming)):
                on_it = (sim, other)
        if on_it is not None:
            best = on_it
        elif named:
            # no view of the named thing was read: the holder's earlier words that name it
            best = earlier_view(graph, stamp, new, settings, embedder=embedder,
                                naming=naming) or best
        if best is None and revises:
            best = earlier_view(graph, stamp, new, settings, embedder=embedder)
        if best is not None and not revises and _said_still(graph, new):
            best = None  # a view said to hold still is no opposite stance
        if best is not None:
            why = "says the view changed" if revises else "takes the opposite stance"
            ended = best[1]
            ended_on = set(ended.grounded_in)  # the events whose views the change ended
            supersede(graph, stamp, ended, new,
                      f"consolidation: a later claim of the same holder {why} "
                      f"(utterance similarity {best[0]:.2f})")
            result.superseded += 1
            # The view that changed may have been put more than once in other words ("pineapple
            # on pizza is a crime", "still think pineapple on pizza is a crime"): a change of
            # mind ends each restatement of it too.
            for other in earlier:
                if other.id == ended.id or _superseded(graph, other):
                    continue
                # a change that names its thing ends each earlier view the holder still had of
                # that thing, however differently it was put and whichever stance the reading
                # gave it (a read stance is a guess; that the holder spoke of the thing they
                # now say they were wrong about is not)
                # (not an earlier change of mind, which took the side the holder takes again)
                if on_it is not None and sweeps and not other.attrs.get("revises") \
                        and not other.attrs.get("supersedes") \
                        and (_head(new) == _head(other) != ""
                             or _pronoun_for(graph, other, naming)):
                    supersede(graph, stamp, other, graph.nodes[new.id],
                              f"consolidation: an earlier view of {ended.id}'s thing, which "
                              f"a later claim says changed", link_newer=False)
                    result.superseded += 1
                    ended_on.update(other.grounded_in)
                    continue
                if (other.attrs.get("stance") or "neutral") != \
                        (ended.attrs.get("stance") or "neutral"):
                    continue
                sim = _utterance_similarity(graph, other, ended)
                # of the same side: a view of that thing, however differently it was put, and
                # no view of another thing, however alike its entry reads
                if on_it is not None:
                    again = _head(new) == _head(other) != "" \
                        or about_one_thing(new, other) \
                        or about_one_thing(ended, other)
                    why = "the change names the thing it is about"
                    if not again and sim >= restatement and not _names_a_thing(other):
                        # "Poppy told me she loved it too": no other thing named
                        again, why = True, f"utterance similarity {sim:.2f}"
                else:
                    again, why = sim >= restatement, f"utterance similarity {sim:.2f}"
                if again:
                    supersede(graph, stamp, other, graph.nodes[new.id],
                              f"consolidation: a restatement of the view {ended.id} that "
                              f"a later claim changed ({why})", link_newer=False)
                    result.superseded += 1
                    ended_on.update(other.grounded_in)
            if on_it is not None and sweeps:
                # The holder's own words that name the thing and were read as no view of it
                # ("A week of the phone ban … Pointless, as I said") held the view too: the
                # most alike such entry, at the bar of an opposite stance (these words were
                # not read as a view); not an entry of another writer that names the holder,
                # nor one holding a view of the holder's of the thing, current or ended (its
                # view was read: ended above, by an earlier change, or of another side).
                for held_id in _held(graph, holder, claims):
                    view = graph.nodes.get(held_id)
                    if view is not None and held_id != new.id and (
                            naming & thing_words(view.text)
                            or _pronoun_for(graph, view, naming)):
                        ended_on.update(view.grounded_in)
                more = earlier_view(graph, stamp, graph.nodes[new.id], settings,
                                    embedder=embedder, naming=naming,
                                    skip=frozenset(ended_on))
                if more is not None:
                    supersede(graph, stamp, more[1], graph.nodes[new.id],
                              "consolidation: earlier words of the holder naming the thing "
                              "a later claim says their view of changed", link_newer=False)
                    result.superseded += 1


def reconcile_claims(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    index: ClaimIndex,
    *,
    claims: Iterable[str] | None = None,
    embedder: str | None = None,
) -> ClaimResult:
    """Reconcile the groups of the claims in ``claims`` (every group when None).
    ``index`` must reflect the graph. Runs inside an open graph transaction. ``embedder``:
    the name of the embedder of the event vectors (the polarity model is that embedder's)."""
    result = ClaimResult()
    if claims is None:
        keys = sorted(index.groups)
    else:
        found = (index.add(graph, graph.resolve(c)) for c in dict.fromkeys(claims))
        keys = sorted({k for k in found if k is not None})
    for key in keys:
        reconcile_group(graph, stamp, index, key, result, embedder=embedder,
                        gap=settings.claim_lean_gap)
    revise(graph, stamp, graph.by_kind[NodeKind.CLAIM] if claims is None else claims, result,
           settings, embedder=embedder)
    return result
