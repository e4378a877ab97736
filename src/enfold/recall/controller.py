"""The recall controller: composes the operators from the query analysis.

Rule-based and deterministic. Every step is recorded (operator, inputs, how many items it
produced) and every returned item carries the path of operators that produced it.

Evidence events are gathered by every signal — lexical and dense anchors on events;
events grounding the concepts, facts and claims that anchor on the query; a typed traversal
from the named people; for attribution questions, the utterances behind the holder's
claims; the neighbouring turns of the best lexical and dense hits — and ranked by
calibrated scores (:mod:`enfold.recall.rank`): each signal keeps its size relative to the
query's best, so one event holding a rare word of the question is not buried under the
events of a large concept, as reciprocal-rank fusion buried it. A time the question names
is a signal too (the event happened then or speaks of it), not a filter.
"""

from __future__ import annotations

import heapq
import itertools
import re
from collections.abc import Callable, Collection, Container, Iterable, Mapping
from functools import partial

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import EdgeType, NodeKind
from enfold.recall.analyze import QueryAnalysis
from enfold.recall.operators import (
    Scores,
    anchor,
    anchor_dense,
    ground,
    in_window,
    intersect,
    ranked,
    traverse,
)
from enfold.recall.pack import ContextPack, Item
from enfold.recall.rank import (
    Model,
    Signals,
    feature_matrix,
    packaged_model,
    relative_scores,
)
from enfold.settings import Settings
from enfold.store.base import words as text_words
from enfold.text.speakers import speaker_name
from enfold.text.terms import QueryTerms

Lexical = Callable[[str, Iterable[NodeKind], int], list[tuple[str, float]]]
#: Each word's weight in the lexical ranking (:meth:`enfold.store.base.Store.word_weights`).
WordWeights = Callable[[list[str]], Mapping[str, float]]
# the defaults of Settings.turns_kept and Settings.facts_first_margin
TURNS_KEPT: int = Settings.turns_kept
FACT_MARGIN: float = Settings.facts_first_margin
NAMED_MARGIN: float = Settings.facts_first_named_margin
_DERIVED = (NodeKind.CONCEPT, NodeKind.FACT, NodeKind.CLAIM, NodeKind.INTENT)
#: BM25 hits of the derived kinds the anchor takes (:func:`gather`).
DERIVED_DEPTH = 50


#: Closed-class words (pronouns, determiners, auxiliaries and modals, prepositions,
#: conjunctions, question words and the pieces contractions leave): they say how a question
#: is asked, not what it is about. In BM25 they score wherever the events happen to use
#: them, and in a personal stream, where few events ask anything, "what" is a rare word: an
#: event that says "lost track of what day it is" was the best match for "What's the
#: deadline for my NMC paperwork?" when no event held "deadline". Open-class words ("make",
#: "last", "next") are kept, and so is "may" (the month).
_FUNCTION_WORDS = frozenset(re.findall(r"[a-z]+", """
    i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his
    himself she her hers herself it its itself they them their theirs themselves
    what which who whom whose when where why how whatever whoever
    a an the this that these those some any each every either neither another such
    am is are was were be been being have has had having do does did
    will would shall should can could might must
    of in on at to for from with by about into onto upon over under after before between
    through during without within across along around against among toward towards via
    and or but nor so if than then because as whether
    not there s t ll re ve d m
"""))
_QUERY_WORD = re.compile(r"\w+", re.UNICODE)
#: A negated auxiliary ("won't", "didn't"), and what a contraction leaves after its
#: apostrophe ("'s", "'ll"): no content either way.
_CONTRACTION = re.compile(r"\b\w+n['’]t\b|['’](?:s|d|ll|re|ve|m)\b", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?]\s*$")


def lexical_query(query: str) -> str:
    """The words of ``query`` its BM25 searches use: without :data:`_FUNCTION_WORDS` and
    contractions, unless a word is capitalized inside a sentence ("What did Will say?": a
    name; not "I", nor a question in capitals); the query itself when nothing else is left
    ("Who is it?")."""
    text = _CONTRACTION.sub(" ", query)
    shouting = text.isupper()
    kept = []
    seen = False  # a word with a letter or digit came before
    last = 0  # where the word before ended: only the gap since then is read (one pass)
    for m in _QUERY_WORD.finditer(text):
        word = m.group()
        named = (seen and not shouting and word[:1].isupper() and word != "I"
                 and not _SENTENCE_END.search(text, last, m.start()))
        if word.lower() not in _FUNCTION_WORDS or named:
            kept.append(word)
        seen = seen or any(c.isalnum() for c in word)
        last = m.end()
    return " ".join(kept) if kept else query


def lexical_calls(settings: Settings) -> list[tuple[tuple[NodeKind, ...], int]]:
    """The lexical searches :func:`gather` makes for a question, as (kinds, depth), in the
    order it makes them: the events', then the derived nodes' (each scores only the rows of
    its kinds). :mod:`enfold.recall.ahead` starts them before the question is parsed."""
    return [((NodeKind.EVENT,), settings.lex_depth), (_DERIVED, DERIVED_DEPTH)]


def _people(graph: WorkingGraph, analysis: QueryAnalysis, settings: Settings, sig: Signals,
            events: Container[str]) -> list[dict[str, object]]:
    """The events of the people the query names (``sig.person``), those they said
    (``sig.speaker``), and the steps taken."""
    steps: list[dict[str, object]] = []
    people = [p for p in (_person(graph, name) for name in analysis.people) if p]
    if not people:
        return steps
    seeds = {p: 1.0 for p in people}
    reach = traverse(graph, seeds, edge_types=(EdgeType.PARTICIPATES, EdgeType.MENTIONS),
                     hops=1, decay=settings.traverse_decay, ppr_blend=settings.ppr_blend,
                     hub_scan=settings.traverse_hub_scan)
    sig.person = {e: s for e, s in reach.items() if e in events}
    steps.append({"op": "traverse", "from": list(analysis.people), "events": len(sig.person)})
    if analysis.comparison and len(people) >= 2:
        shared = intersect(graph, {people[0]: 1.0}, {people[1]: 1.0})
        steps.append({"op": "intersect", "between": list(analysis.people[:2]),
                      "found": len(shared)})
        for e, s in shared.items():
            if e in events:
                sig.person[e] = max(sig.person.get(e, 0.0), s)
    names = [graph.nodes[p].text for p in people]
    said: dict[str, bool] = {}  # by source: the events' speakers are few
    for e in sig.person:
        source = graph.nodes[e].attrs.get("source")
        if not isinstance(source, str):
            continue
        by = said.get(source)
        if by is None:
            by = said[source] = _said_by(source, names)
        if by:
            sig.speaker.add(e)
    return steps


def _seq_index(graph: WorkingGraph) -> dict[int, str]:
    # (speed, issue 23: the graph keeps this index as events come and go, where a rebuild
    # over every event followed each new one)
    return graph.events_by_seq


def gather(
    graph: WorkingGraph,
    lexical: Lexical,
    analysis: QueryAnalysis,
    qvec: np.ndarray | None,
    settings: Settings,
    steps: list[dict[str, object]] | None = None,
    weights: WordWeights | None = None,
) -> tuple[Signals, Scores, Scores]:
    """Run the operators for one query: the evidence signals (see
    :mod:`enfold.recall.rank`), the derived nodes that anchor on the query, and the claims
    asked for. ``weights`` gives the query's words their weights for the ``cover`` feature
    (none: it is 0 for every event)."""
    steps = [] if steps is None else steps
    q = lexical_query(analysis.query)
    win = analysis.window
    sig = Signals(asks_latest=analysis.asks_latest)
    events = graph.by_kind[NodeKind.EVENT]

    # (speed: what needs no lexical result first, the dense searches and the people's
    # traversal, while the lexical searches started ahead run on their worker; the results
    # and the steps' order are those of the order the steps are listed in)
    if qvec is not None:
        hits = graph.event_vectors.search(qvec, settings.dense_depth, accept=lambda i: i in events)
        if hits:
            sig.dense_floor = hits[min(settings.dense_floor_rank, len(hits)) - 1][1]
        sig.dense = dict(hits)
        if win is not None:  # the closest events of the asked time, too
            # (speed: the asked time's events by bisection over their times, then their
            # cosines; a filtered search of the whole index scanned 100k events in Python
            # for a window that holds a few hundred)
            sig.dense.update(graph.event_vectors.nearest_among(
                qvec, _Times.of(graph).within(win), settings.window_depth))
        if graph.passage_count:  # a long event's best passage (enfold.text.passages)
            # (only above the dense floor: a passage below it scores 0 as a feature, and
            # its event would be one more candidate to score for nothing)
            sig.passage = {e: sim for e, sim in graph.nearest_passages(
                qvec, settings.dense_depth).items() if sim > sig.dense_floor and e in events}
        sig.dense_hits = {*sig.dense, *sig.passage}
    derived_dense = anchor_dense(graph, qvec, _DERIVED, depth=DERIVED_DEPTH)
    person_steps = _people(graph, analysis, settings, sig, events)

    sig.lex = {i: s for i, s in lexical(q, [NodeKind.EVENT], settings.lex_depth) if i in events}
    if weights is not None:  # (after the search: the store has just counted these words)
        listed = text_words(q)
        sig.terms = QueryTerms(listed, weights(listed))
    steps.append({"op": "anchor", "kinds": ["event"], "lexical": len(sig.lex),
                  "dense": len(sig.dense)})

    derived = anchor(graph, lexical, q, qvec, _DERIVED, depth=DERIVED_DEPTH,
                     rrf_k=settings.rrf_k, dense=derived_dense)
    steps.append({"op": "anchor", "kinds": [k.value for k in _DERIVED], "found": len(derived)})
    top_derived = dict(sorted(derived.items(), key=lambda x: -x[1])[:10])
    grounding = partial(ground, per_node=settings.ground_per_node, scan=settings.ground_scan,
                        max_nodes=settings.ground_max_nodes)
    sig.ground = {e: s for e, s in grounding(graph, top_derived, qvec=qvec).items()
                  if e in events}
    steps.append({"op": "ground", "from": len(top_derived), "events": len(sig.ground)})
    steps.extend(person_steps)

    claims = _claims(graph, analysis, derived, qvec, settings.holder_claims_max,
                     settings.holder_claims_scan)
    if claims:
        said = {e: s for e, s in grounding(graph, claims).items() if e in events}
        sig.claim = _closest_utterances(graph, said, qvec, settings.holder_events_max)
        steps.append({"op": "ground", "claims_of": analysis.holder, "claims": len(claims),
                      "utterances": len(sig.claim)})
    return sig, derived, claims


def _closest_utterances(graph: WorkingGraph, utterances: Scores, qvec: np.ndarray | None,
                        most: int) -> Scores:
    """Of more than ``most`` utterances behind the asked claims (a holder's dozens of views,
    each said many times), the ``most`` best: those of the best-scored claims first (the
    claims the anchors found outscore the rest of a holder's), then the closest to the
    query, the newest among equals (ids sort by creation); without a query vector, the
    newest. Each claim gives its most recent utterances (:func:`ground` without a query
    vector), so the closest are chosen among those. An utterance left out is a candidate
    only if another signal finds it: every one kept is one more candidate to score (speed,
    issue 23)."""
    if len(utterances) <= most:
        return utterances
    ids = list(utterances)
    close = (graph.event_vectors.similarity_array(qvec, ids) if qvec is not None
             else np.zeros(len(ids)))
    # (a NaN cosine, of a vector that held one, counts as an event the index lacks)
    closeness = dict(zip(ids, np.nan_to_num(close, nan=-2.0).tolist(), strict=True))
    best = heapq.nlargest(most, ids, key=lambda e: (utterances[e], closeness[e], e))
    return {e: utterances[e] for e in best}


def recall(
    graph: WorkingGraph,
    lexical: Lexical,
    analysis: QueryAnalysis,
    qvec: np.ndarray | None,
    settings: Settings,
    *,
    k: int = 10,
    neighbours: bool = True,
    model: Model | None = None,
    embedder: str | None = None,
    weights: WordWeights | None = None,
) -> ContextPack:
    """Run the operators for one query and assemble the ContextPack. ``embedder``: the
    name of the embedder the event vectors come from (the view classifier reads them);
    ``weights``: the store's weights of the query's words (:func:`gather`)."""
    pack = ContextPack(query=analysis.query)
    sig, derived, claims = gather(graph, lexical, analysis, qvec, settings, pack.steps,
                                  weights=weights)
    candidates, near = candidate_set(graph, sig, qvec, analysis, settings,
                                     neighbours=neighbours)
    if not analysis.asks_opinion:
        sig.opinion = _opinions(graph, candidates)
    model = model or packaged_model()
    fused: Scores = {}
    if candidates:
        x = feature_matrix(candidates, sig, near)
        fused = dict(zip(candidates, relative_scores(model.score(x)).tolist(), strict=True))
    marks: dict[str, list[str]] = {}  # the reorderings' steps, after each one's path
    order = ranked(fused)
    if analysis.holder and sig.claim:
        order = _holder_first(graph, order, sig.claim, marks)
    elif analysis.holder and embedder is not None:
        order = _holder_voice_first(graph, order, analysis.holder, embedder, marks)
    evidence = order[:k]
    if not analysis.asks_opinion and not _view_of_named(
            graph, evidence[:3], fused, analysis.query, settings.facts_first_named_margin):
        evidence = _facts_first(graph, evidence, fused, marks, settings.facts_first_margin,
                                holding=sig.answer)
    # (speed: the paths of what is returned, not of every candidate)
    paths = _paths(evidence, sig, near)
    for e, steps in marks.items():
        paths.setdefault(e, []).extend(steps)
    pack.steps.append({"op": "fuse", "candidates": len(candidates), "evidence": len(evidence)})

    pack.evidence = [_item(graph, e, fused[e], paths.get(e, [])) for e in evidence]
    for node_id in ranked(derived)[: 2 * k]:
        node = graph.nodes[node_id]
        item = _item(graph, node_id, derived[node_id], ["anchor:derived"])
        {NodeKind.CONCEPT: pack.concepts, NodeKind.FACT: pack.facts,
         NodeKind.INTENT: pack.intents}.get(node.kind, []).append(item)
    # equal scores (a holder's claims the query did not anchor on) go most recent first:
    # ids sort by creation time, and a set's order would change from run to run
    # (speed: the k best by (score, id) in one pass, not two sorts of a holder's thousands)
    pack.claims = [_item(graph, c, s, ["claims"]) for s, c in
                   heapq.nlargest(k, ((s, c) for c, s in claims.items()))]
    for lst in (pack.concepts, pack.facts, pack.intents):
        del lst[k:]
    return pack


Neighbours = dict[str, tuple[tuple[str, ...], tuple[str, ...]]]


def candidate_set(graph: WorkingGraph, sig: Signals, qvec: np.ndarray | None,
                  analysis: QueryAnalysis, settings: Settings, *,
                  neighbours: bool = True) -> tuple[list[str], Neighbours]:
    """The events worth scoring: every event a signal found, and the neighbouring turns of
    the best lexical and dense hits. Every candidate gets its cosine to the query (an event
    found only by the graph has one too), the turns one and two places away, and the
    marks of the asked time and of the asked kind of answer."""
    found: dict[str, None] = dict.fromkeys(
        [*sig.lex, *sig.dense, *sig.passage, *sig.ground, *sig.person, *sig.claim])
    near: Neighbours = {}
    turns: _Turns | None = None
    if neighbours and found:
        turns = _Turns.of(graph, settings.neighbour_gap_s, settings.turns_kept)
        n = settings.neighbour_sources
        sources = [*ranked(sig.lex)[:n], *ranked(sig.dense)[:n]]
        for e in sources:
            one, two = turns(e)
            for nb in (*one, *two):
                found.setdefault(nb, None)
    candidates = list(found)
    nodes = graph.nodes
    sig.ts = {e: nodes[e].ts for e in candidates}
    if sig.terms:  # (speed: the BM25 hits only; an event BM25 did not find holds little of
        # the question's weight, and a hundred texts are read, not every candidate's)
        cover = sig.terms.cover
        sig.cover = {e: c for e in sig.lex if (c := cover(nodes[e].text)) > 0.0}
    if turns is not None:
        near = _turns_among(graph, candidates, sig.ts, turns)
    window = analysis.window
    if window is not None:
        sig.window = {e for e in candidates if _of_time(graph, e, window)}
    if analysis.asks_holder:  # the answer is whoever holds the view: its utterances
        sig.answer = _opinions(graph, candidates)
    elif analysis.answer_type is not None:
        sig.answer = _holding(graph, candidates, analysis.answer_type)
    if qvec is not None:
        missing = [e for e in candidates if e not in sig.dense]
        if missing:
            sig.dense.update(graph.event_vectors.similarities(qvec, missing))
        if graph.passage_count:
            sig.passage.update(graph.passage_similarities(
                qvec, [e for e in candidates if e not in sig.passage]))
    return candidates, near


def _turns_among(graph: WorkingGraph, candidates: list[str], ts: dict[str, float],
                 turns: _Turns) -> Neighbours:
    """Each candidate's turns one and two places away (:class:`_Turns`) that are candidates
    themselves, found by sorting the candidates' sequence numbers (no lookup per neighbour
    in the log). The turns left out are events no signal found: every score the ranking
    reads of a neighbour (its lexical and dense score) is 0 for them, and being a turn is
    symmetric, so the features and paths are those of every turn. A candidate whose
    number is not its own in the log's index (an imported event without one) gets
    ``turns``' answer."""
    index = _seq_index(graph)
    nodes = graph.nodes
    seqs = [int(nodes[e].attrs.get("seq", 0)) for e in candidates]
    own = np.fromiter((index.get(s) == e for s, e in zip(seqs, candidates, strict=True)),
                      bool, len(candidates))
    seq = np.asarray(seqs, dtype=np.int64)
    times = np.fromiter(map(ts.__getitem__, candidates), np.float64, len(candidates))
    mine = np.flatnonzero(own)  # distinct numbers: the index holds one event per number
    order = mine[np.argsort(seq[mine], kind="stable")]
    sorted_seq = seq[order]
    found: list[list[list[str]]] = [[[], []] for _ in candidates]
    for d in (1, 2):
        for sign in (-1, 1):  # before, then after: _Turns' order
            if not len(order):
                break
            want = seq + sign * d
            at = np.minimum(np.searchsorted(sorted_seq, want), len(order) - 1)
            other = order[at]
            hit = own & (sorted_seq[at] == want) \
                & (np.abs(times[other] - times) <= turns.gap_s)
            for i in np.flatnonzero(hit).tolist():
                found[i][d - 1].append(candidates[int(other[i])])
    return {e: (tuple(found[i][0]), tuple(found[i][1])) if own[i] else turns(e)
            for i, e in enumerate(candidates)}


class _Times:
    """The events in time order, kept in the graph's state while
    :attr:`~enfold.graph.WorkingGraph.events_epoch` stays (an event that comes, goes or
    changes its time moves it): the events of a time window are one slice of it."""

    def __init__(self, graph: WorkingGraph) -> None:
        self.nodes = graph.nodes
        self.epoch = graph.events_epoch
        ids = list(graph.by_kind[NodeKind.EVENT])
        nodes = graph.nodes
        ts = np.fromiter((nodes[e].ts for e in ids), np.float64, len(ids))
        order = np.argsort(ts, kind="stable")
        self.ts = ts[order]
        self.ids = [ids[i] for i in order.tolist()]

    @classmethod
    def of(cls, graph: WorkingGraph) -> _Times:
        times = graph.indexes.of(cls, lambda: cls(graph))
        if times.epoch != graph.events_epoch or times.nodes is not graph.nodes:
            times = graph.indexes.put(cls(graph))
        return times

    def within(self, window: tuple[float, float]) -> list[str]:
        """The events with ``window[0] <= ts < window[1]`` (the temporal gate's test)."""
        lo, hi = np.searchsorted(self.ts, window, side="left").tolist()
        return self.ids[lo:hi]


class _Turns:
    """The events one and two places before and after an event in the log that are turns
    of the same conversation (within ``gap_s`` seconds of it: ``Settings.neighbour_gap_s``).

    They follow from the events' order and times alone, so they are kept in the graph's
    state while :attr:`~enfold.graph.WorkingGraph.events_epoch` stays (a recall's access
    statistics leave it): a query asks for some hundreds of candidates, and queries about
    one topic meet the same events."""

    def __init__(self, graph: WorkingGraph, gap_s: float) -> None:
        self.nodes = graph.nodes
        self.gap_s = gap_s
        self.index = _seq_index(graph)
        self.epoch = graph.events_epoch
        self.found: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {}

    @classmethod
    def of(cls, graph: WorkingGraph, gap_s: float, kept: int = TURNS_KEPT) -> _Turns:
        """The graph's turns within ``gap_s``; started anew once they hold more than
        ``kept`` events' turns (``Settings.turns_kept``)."""
        turns = graph.indexes.of(cls, lambda: cls(graph, gap_s))
        if turns.epoch != graph.events_epoch or turns.nodes is not graph.nodes \
                or turns.gap_s != gap_s or len(turns.found) > kept:
            turns = graph.indexes.put(cls(graph, gap_s))
        return turns

    def __call__(self, event_id: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        got = self.found.get(event_id)
        if got is not None:
            return got
        nodes = self.nodes
        seq = int(nodes[event_id].attrs.get("seq", 0))
        ts = nodes[event_id].ts
        index, gap_s = self.index, self.gap_s
        away: list[tuple[str, ...]] = []
        for d in (1, 2):
            away.append(tuple(
                other for other in (index.get(seq - d), index.get(seq + d))
                if other is not None and abs(nodes[other].ts - ts) <= gap_s))
        got = self.found[event_id] = (away[0], away[1])
        return got


def _paths(candidates: list[str], sig: Signals, near: Neighbours) -> dict[str, list[str]]:
    """The operator path of each candidate: the signals that found it."""
    paths: dict[str, list[str]] = {}
    for e in candidates:
        path = paths.setdefault(e, [])
        direct = e in sig.lex or e in sig.dense_hits
        if direct:
            path.append("anchor:event")
        for name, scores in (("anchor:derived>ground", sig.ground),
                             ("traverse:person", sig.person), ("claims>ground", sig.claim)):
            if e in scores:
                path.append(name)
        one, two = near.get(e, ((), ()))
        if not direct and any(n in sig.lex or n in sig.dense_hits for n in (*one, *two)):
            path.append("neighbour")
    return paths


def _of_time(graph: WorkingGraph, event_id: str, window: tuple[float, float]) -> bool:
    """The temporal gate, soft: an event of the asked time happened in it, or speaks of it
    (a time anchor it mentions overlaps it: "the race in May", said in March)."""
    if in_window(graph, event_id, window):
        return True
    for e in graph.out_edges(event_id):
        if e.type is EdgeType.MENTIONS and e.dst in graph.by_kind[NodeKind.TIME]:
            a = graph.nodes[e.dst].attrs
            start, end = a.get("start"), a.get("end")
            if isinstance(start, (int, float)) and isinstance(end, (int, float)) \
                    and start < window[1] and end > window[0]:
                return True
    return False


def _said_by(source: object, names: list[str]) -> bool:
    from enfold.text.people import same_person

    said = speaker_name(source) if isinstance(source, str) else None
    return said is not None and any(same_person(said, n) for n in names)


def _holder_first(graph: WorkingGraph, order: list[str], utterances: Scores,
                  paths: dict[str, list[str]]) -> list[str]:
    """For "what does X think", X's best-ranked utterance of a view goes first: it is the
    answer, and an account of what happened, however close in words, is not (CogMem's
    attribution guard). The ranking weights are fitted on questions that are mostly not
    about views, so this is a rule, not a weight; only the top moves (moving all of X's
    utterances up cost LoCoMo 5 points of recall@20).

    The mirror of :func:`_facts_first`: when that utterance is an account that also
    carries a view of X's (it states particulars: "We bought him a kit for £399 so it'd be
    quieter") and a plain view of X's is among the top three, the plain view goes first."""
    best = next((e for e in order if e in utterances), None)
    if best is None:
        return order
    if not _is_opinion(graph, best):
        best = next((e for e in order[:3] if e in utterances and _is_opinion(graph, e)),
                    best)
    paths.setdefault(best, []).append("holder-first")
    return [best, *(e for e in order if e != best)]


def _holder_voice_first(graph: WorkingGraph, order: list[str], holder: str, embedder: str,
                        paths: dict[str, list[str]]) -> list[str]:
    """For "what does X think" when X holds no claim the graph read (a verdict with no
    stance word the classifier was not sure of: "Seven hours on a bus with no toilet.
    Lovely holiday, ten out of ten."), X's own utterance among the top three that the view
    classifier (:mod:`enfold.text.subjectivity`) finds likeliest a view goes first: an
    utterance passing on someone else's view is not X's, and X's plain account less likely
    the answer than X's verdict. Only with the embedder the classifier was fitted for."""
    from enfold.text.people import same_person
    from enfold.text.subjectivity import view_probability

    person = _person(graph, holder)
    if person is None or not order:
        return order
    name = graph.nodes[person].text
    claims = graph.by_kind[NodeKind.CLAIM]
    best, best_p = None, -1.0
    for e in order[:3]:
        source = speaker_name(graph.nodes[e].attrs.get("source"))
        if source is None or not same_person(source, name):
            continue
        others = any(edge.type is EdgeType.SUPPORTED_BY and edge.src in claims
                     and not same_person(str(graph.nodes[edge.src].attrs.get("holder")), name)
                     for edge in graph.in_edges(e))
        p = None if others else view_probability(graph.event_vectors.get(e), embedder)
        if p is not None and p > best_p:
            best, best_p = e, p
    if best is None or best == order[0]:
        return order
    paths.setdefault(best, []).append("holder-voice-first")
    return [best, *(e for e in order if e != best)]


def _facts_first(graph: WorkingGraph, evidence: list[str], fused: Scores,
                 paths: dict[str, list[str]], margin: float = FACT_MARGIN,
                 holding: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """For a question about what happened, a plain account outranks a nearby opinion.

    CogMem's semantic-collapse guard, applied as a local reordering: when the best evidence
    is someone's view and a claim-free utterance is among the top three (scoring at least
    ``margin`` of it: ``Settings.facts_first_margin``), the plain account goes first. Only the order within the top
    three changes, so recall@k for k ≥ 3 is untouched and opinions stay in the evidence
    (in conversations they are often what a question is about). A blanket demotion of
    claim-bearing turns cost 3.7 points of LoCoMo recall@10; this costs none.

    A question for a time, a sum or a number (``holding``: the candidates that hold one of
    the asked kind) goes further: a claim-bearing best that holds none yields to a
    claim-free utterance among the top three that holds one, whatever its score.
    """
    if not evidence:
        return evidence
    claimed, opinion = _claim_marks(graph, evidence[0])
    # a view beside particulars ("he'd do it for half") yields too, if it holds no asked one
    lacks = claimed and bool(holding) and evidence[0] not in holding
    if not opinion and not lacks:
        return evidence
    top = fused[evidence[0]]
    for i, e in enumerate(evidence[1:3], 1):
        e_claimed, e_opinion = _claim_marks(graph, e)
        if e_opinion:
            continue
        if opinion and fused[e] >= margin * top or lacks and e in holding and not e_claimed:
            paths.setdefault(e, []).append("fact-before-opinion")
            return [e, *evidence[:i], *evidence[i + 1:]]
    return evidence


def _view_of_named(graph: WorkingGraph, top: list[str], fused: Scores, query: str,
                   margin: float = NAMED_MARGIN) -> bool:
    """Whether the best evidence is the view of someone the question names, so that the
    facts-first guard stands aside: a view the speaker reports of someone else ("my
    brother says ...", "the treasurer maintains ..."; the speaker passed on nothing of
    that person's but the view, so a question about them asks for it), or the speaker's
    own view when no plain account among the top three scores ``margin`` of it
    (``Settings.facts_first_named_margin``): a question the parse did not read as one
    about a view ("What does Carmen intend to do with her savings?") whose named person's
    view is far ahead of any plain account."""
    if not top:
        return False
    from enfold.text.people import same_person

    event = graph.nodes[top[0]]
    source = speaker_name(event.attrs.get("source"))
    words = {w.lower() for w in re.findall(r"[\w'-]+", query)}
    claims = graph.by_kind[NodeKind.CLAIM]
    alone = all(fused[e] < margin * fused[top[0]] for e in top[1:]
                if not _is_opinion(graph, e))
    for edge in graph.in_edges(top[0]):
        if edge.type is not EdgeType.SUPPORTED_BY or edge.src not in claims:
            continue
        holder = graph.nodes[edge.src].attrs.get("holder")
        if not isinstance(holder, str):
            continue
        own = isinstance(source, str) and same_person(source, holder)
        if own and not alone:
            continue
        parts = [w.lower() for w in re.findall(r"[^\W\d_]{3,}", holder)]
        if words.intersection(parts):
            return True
    return False


def _claim_marks(graph: WorkingGraph, event_id: str) -> tuple[bool, bool]:
    """Whether a claim rests on an event, and whether one that states no particulars does
    (:func:`_is_opinion`), from one walk over its in-edges."""
    claims = graph.by_kind[NodeKind.CLAIM]
    claimed = False
    for e in graph.in_edges(event_id):
        if e.type is EdgeType.SUPPORTED_BY and e.src in claims:
            claimed = True
            if not graph.nodes[e.src].attrs.get("states_facts"):
                return True, True
    return claimed, False


def _is_opinion(graph: WorkingGraph, event_id: str) -> bool:
    """Whether an event is the utterance of a claim (a claim rests on it) and nothing
    more: an utterance that also states particulars (an amount, a date, a count) answers
    factual questions too."""
    return _claim_marks(graph, event_id)[1]


def _opinions(graph: WorkingGraph, event_ids: Iterable[str]) -> set[str]:
    """The events of ``event_ids`` that :func:`_is_opinion` holds are opinions (the same
    test over each event's in-edges, with the lookups bound once)."""
    claims = graph.by_kind[NodeKind.CLAIM]
    nodes, inn = graph.nodes, graph.inn
    supported = EdgeType.SUPPORTED_BY
    return {e for e in event_ids
            if any(edge.type is supported and edge.src in claims
                   and not nodes[edge.src].attrs.get("states_facts")
                   for edge in inn.get(e, {}).values())}


#: A number in a text, and the word right after it ("£118.40", "50 bucks", "20k").
_NUMBER = re.compile(r"\d[\d,.]*[ \u00a0]?([^\W\d_]*)")
_SIGNS = frozenset("$£€¥₹")
_CODES = frozenset({"usd", "gbp", "eur", "cad", "aud", "nzd", "chf", "inr"})
_UNITS = _CODES | frozenset({"dollar", "dollars", "buck", "bucks", "pound", "pounds", "quid",
                             "euro", "euros", "cent", "cents", "pence", "yen", "k"})
#: Cardinal numbers in words (English's closed class; "one" and "once" left out, mostly a
#: pronoun and a conjunction), compounds included ("twenty-five", "two hundred and ten"),
#: and the word right after them ("twenty quid").
_CARDINALS = ("zero|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|"
              "fourteen|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|"
              "fifty|sixty|seventy|eighty|ninety|hundred|thousand|million|billion|dozen|"
              "twice|thrice")
_WORD_UNITS = _UNITS - {"k"}  # "twenty quid"; "twenty k" is no sum
_NUMBER_WORD = re.compile(rf"\b(?:{_CARDINALS})(?:(?:[- ]|\sand\s)(?:{_CARDINALS}|one))*\b"
                          r"[ \u00a0]?([^\W\d_]*)", re.IGNORECASE)
#: The kind of node an event MENTIONS when it holds an answer of each type (the write path
#: links an event to the people it names and the times it mentions).
_ANSWER_KINDS = {"person": NodeKind.PERSON, "time": NodeKind.TIME}


def numbers_in(text: str) -> tuple[bool, bool]:
    """Whether ``text`` states a number, and whether it states a sum of money: a currency
    sign or code beside a number ("£118.40", "USD 30", "40€"), or a number of a currency
    ("50 bucks", "20k", "twenty quid"). A number in words counts ("five exercises, twice a
    day")."""
    number = any(d in text for d in "0123456789")
    if number:
        for m in _NUMBER.finditer(text):
            at = m.start()
            before = text[max(0, at - 5):at].rstrip().lower()
            if before[-1:] in _SIGNS or before[-3:] in _CODES and (
                    len(before) < 4 or not before[-4].isalpha()):
                return True, True
            word = m.group(1)
            if word.lower() in _UNITS or text[m.end():m.end() + 1] in _SIGNS:
                return True, True
    for m in _NUMBER_WORD.finditer(text):
        number = True
        if m.group(1).lower() in _WORD_UNITS:
            return True, True
    return number, False


class _Numbers:
    """:func:`numbers_in` of each event, kept beside the graph (an event's words do not
    change while it keeps its text; the entry holds the text's hash, not the text, so a
    forgotten event's words stay nowhere here)."""

    KEPT = 200_000

    def __init__(self) -> None:
        self.found: dict[str, tuple[int, bool, bool]] = {}

    def __call__(self, event_id: str, text: str) -> tuple[bool, bool]:
        got = self.found.get(event_id)
        key = hash(text)
        if got is not None and got[0] == key:
            return got[1], got[2]
        if len(self.found) >= self.KEPT:
            self.found.clear()
        number, money = numbers_in(text)
        self.found[event_id] = (key, number, money)
        return number, money


def _holding(graph: WorkingGraph, event_ids: Iterable[str], answer_type: str) -> set[str]:
    """The events of ``event_ids`` that hold a thing of the asked kind: a person they name,
    a time they mention (their MENTIONS edges), a sum of money or a number in their
    words."""
    nodes = graph.nodes
    if answer_type in ("number", "money"):
        numbers = graph.indexes.of(_Numbers, _Numbers)
        which = 0 if answer_type == "number" else 1
        return {e for e in event_ids if numbers(e, nodes[e].text)[which]}
    kind = _ANSWER_KINDS.get(answer_type)
    if kind is None:
        return set()
    of_kind = graph.by_kind[kind]
    out, mentions = graph.out, EdgeType.MENTIONS
    return {e for e in event_ids
            if any(t is mentions and dst in of_kind for t, dst in out.get(e, {}))}


def _person(graph: WorkingGraph, name: str) -> str | None:
    from enfold.text.people import refers_to

    return refers_to(name, ((pid, graph.nodes[pid].text)
                            for pid in graph.of_kind(NodeKind.PERSON)))


def _claims(graph: WorkingGraph, analysis: QueryAnalysis, derived: Scores,
            qvec: np.ndarray | None, most: int, scan: int | None = None) -> Scores:
    """Claims relevant to the query; for attribution, only the named holder's: the ones
    the anchors found, and of the rest the ``most`` closest to the query by the events they
    rest on (:func:`_closest_claims`), among the holder's ``scan`` most recent
    (:func:`_recent_claims`; None: all of them), so a holder of thousands of views costs
    what one of ``scan`` views does (speed, issue 23)."""
    claim_ids = graph.by_kind[NodeKind.CLAIM]
    scores = {c: s for c, s in derived.items() if c in claim_ids}
    if analysis.holder:
        holder = _person(graph, analysis.holder)
        if holder is None:
            return {}
        base = min(scores.values(), default=0.01) * 0.5
        # (speed, issue 23: whether the holder holds an anchored claim is a look at the
        # claim's few in-edges; the rest come from the holder's edges to other non-event
        # nodes, not its every edge: a speaker participates in every event it said)
        inn = graph.inn
        held = [c for c in scores if any(o == holder for _, o in inn.get(c, {}))]
        rest = _recent_claims(graph, holder, claim_ids, scores, scan)
        if len(rest) > most:
            rest = _closest_claims(graph, rest, qvec, most)
        scores = {c: scores.get(c, base) for c in (*held, *rest)}
    elif not analysis.asks_opinion:
        scores = {}
    return scores


def _recent_claims(graph: WorkingGraph, holder: str, claim_ids: Collection[str],
                   skip: Collection[str], scan: int | None) -> list[str]:
    """The claims ``holder`` holds (the far ends of its edges to claims), except those in
    ``skip``: all of them when its edges to other non-event nodes are at most ``scan`` (or
    ``scan`` is None); else the claims at the far ends of each edge type's ``scan`` edges
    most recently added to the working graph (after a load, the store's order), and of
    those the ``scan`` newest (ids sort by creation time). The cost then follows ``scan``
    (times the few edge types), not how many views the holder has."""
    by_type = graph.derived.get(holder, {})
    limit = scan if scan is not None and sum(map(len, by_type.values())) > scan else None
    found: dict[str, None] = {}
    for links in by_type.values():  # each edge type's edges, keyed (src, type, dst)
        keys = links if limit is None else itertools.islice(reversed(links), limit)
        for src, _, dst in keys:
            if src == holder and dst in claim_ids and dst not in skip:
                found[dst] = None
    if limit is not None and len(found) > limit:
        return heapq.nlargest(limit, found)
    return list(found)


def _closest_claims(graph: WorkingGraph, claims: list[str], qvec: np.ndarray | None,
                    most: int) -> list[str]:
    """The ``most`` of ``claims`` closest to the query: a claim is as close as the nearest
    of the events it rests on (a claim has no vector of its own); among equals, and without
    a query vector, the newest (ids sort by creation)."""
    nodes = graph.nodes
    sources = [nodes[c].grounded_in for c in claims]
    close = np.full(len(claims), -2.0)
    if qvec is not None:
        # (speed, issue 23: a holder of thousands of claims at 1M events; one array
        # operation per step instead of one per claim)
        lengths = np.fromiter(map(len, sources), dtype=np.int64, count=len(sources))
        if lengths.any():
            sims = graph.event_vectors.similarity_array(
                qvec, [e for src in sources for e in src])
            rests = lengths > 0
            starts = np.cumsum(lengths) - lengths
            close[rests] = np.maximum.reduceat(sims, starts[rests])
    pick: Iterable[int] = range(len(claims))
    if len(claims) > most and not np.isnan(close).any():
        # only the claims at least as close as the most-th closest can be among the best
        least = np.partition(close, len(claims) - most)[len(claims) - most]
        pick = np.flatnonzero(close >= least).tolist()
    # (the best by (closeness, id), as grounding takes its best nodes)
    best = heapq.nlargest(most, pick, key=lambda i: (float(close[i]), claims[i]))
    return [claims[i] for i in best]


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
