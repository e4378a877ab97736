"""Fact consolidation: recurring episodes of one person and one concept become a Fact
(CogMem's consolidation of event clusters).

When at least ``fact_min_events`` events that share a person (PARTICIPATES from them, or
MENTIONS of them) and a concept (GROUNDS or REINFORCES into it) fall within
``fact_window_days``, a Fact node is formed:

* only plain accounts count: an event a claim rests on (someone's view) supports no fact;
* its statement is a template over the whole support, never one event's text under a name:
  the person, the theme, how many accounts over which dates, and the phrases that recur
  in them, most distinctive first (:func:`template_statement`:
  ``"Maya · Marathon training: 6 accounts, 3 Mar – 20 Apr 2026 (long run; river path;
  intervals)"``) — or, in LLM mode, one sentence from the optional ``writer``. The template
  follows the support as the fact grows (its phrases are read again when the support has
  doubled since they were last read);
* ``attrs``: ``first``/``last`` (the temporal envelope, event time), ``support`` (events),
  ``key`` (``"<person id>|<concept id>"``), ``person``, ``concept``, ``subject`` and ``theme``
  (their names at formation), ``statement_by`` (``"template"`` or ``"llm"``), ``phrases``
  and ``phrased_at`` (the template's recurring phrases and the support they were read at);
* ``grounded_in`` lists every supporting event, and SUPPORTED_BY edges go from the fact to
  each of them (evidence mounting); RELATED_TO edges tie it to its concept and person; its
  vector is the supporting events' centroid, so it is found by embedding like a concept.

Later events of the same person and concept that fall within ``fact_window_days`` of the
envelope extend that fact — support, envelope, edges — instead of forming another; the
extension is closed (events that the grown envelope now reaches join too), so one pass
reaches a fixed point. An episode separated from every fact of its key by more than the
window forms a fact of its own: facts of one key are its episodes.

:class:`FactIndex` keeps, per concept and person, the events sorted by time, so an
incremental pass looks only at the window around each new event — never at a concept's
whole history. It is rebuildable state; every entry is checked against the graph when read.
"""

from __future__ import annotations

import bisect
import itertools
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import numpy as np

from enfold.consolidate.clock import Stamp
from enfold.errors import EnfoldError
from enfold.graph import WorkingGraph
from enfold.model import ONTOLOGY, Edge, EdgeType, Node, NodeKind, new_id
from enfold.settings import Settings
from enfold.text.labels import theme_name
from enfold.text.phrases import TermStats, tokens
from enfold.text.themes import theme_phrases
from enfold.write.naming import ThemeNamer

log = logging.getLogger("enfold.consolidate")

DAY = 86_400.0

#: Writes a fact statement from evidence texts: ``writer(texts, subject=…, concept=…)``.
FactWriter = Callable[..., str]

_CONCEPT_EDGES = (EdgeType.GROUNDS, EdgeType.REINFORCES)


@dataclass
class FactResult:
    formed: int = 0
    extended: int = 0  # facts formed earlier that gained support
    visited: int = 0  # seed events examined
    writer_failures: int = 0


def event_pairs(graph: WorkingGraph, event_id: str) -> tuple[list[str], list[str]]:
    """(people, concepts) an event is tied to: PARTICIPATES/MENTIONS; GROUNDS/REINFORCES.
    An utterance a claim rests on is someone's view, not evidence of what happened: it
    supports no fact (the semantic collapse the claim layer exists to prevent)."""
    claims = graph.by_kind[NodeKind.CLAIM]
    if any(e.type is EdgeType.SUPPORTED_BY and e.src in claims
           for e in graph.in_edges(event_id)):
        return [], []
    people_ids = graph.by_kind[NodeKind.PERSON]
    concepts = graph.by_kind[NodeKind.CONCEPT]
    people = [e.src for e in graph.in_edges(event_id)
              if e.type is EdgeType.PARTICIPATES and e.src in people_ids]
    people += [e.dst for e in graph.out_edges(event_id)
               if e.type is EdgeType.MENTIONS and e.dst in people_ids]
    cons = [e.dst for e in graph.out_edges(event_id)
            if e.type in _CONCEPT_EDGES and e.dst in concepts]
    return sorted(set(people)), sorted(set(cons))


@dataclass
class FactIndex:
    """Events by (concept, person), sorted by time; facts by (person, concept); the facts
    each event supports."""

    events: dict[str, dict[str, list[tuple[float, str]]]] = field(default_factory=dict)
    facts: dict[tuple[str, str], list[str]] = field(default_factory=dict)
    support: dict[str, set[str]] = field(default_factory=dict)  # event -> fact ids
    aliases_seen: int = 0

    @classmethod
    def build(cls, graph: WorkingGraph) -> FactIndex:
        index = cls(aliases_seen=len(graph.aliases))
        for ev in graph.of_kind(NodeKind.EVENT):
            index.add_event(graph, ev)
        for fid in graph.of_kind(NodeKind.FACT):
            index.add_fact(graph.nodes[fid])
        return index

    def add_event(self, graph: WorkingGraph, event_id: str) -> list[tuple[str, str]]:
        """Index an event under its current (person, concept) pairs; returns the pairs."""
        node = graph.nodes.get(event_id)
        if node is None:
            return []
        people, concepts = event_pairs(graph, event_id)
        entry = (node.ts, event_id)
        for c, p in itertools.product(concepts, people):
            lst = self.events.setdefault(c, {}).setdefault(p, [])
            i = bisect.bisect_left(lst, entry)
            if i == len(lst) or lst[i] != entry:
                lst.insert(i, entry)
        return [(p, c) for c, p in itertools.product(concepts, people)]

    def add_fact(self, fact: Node) -> None:
        p, c = fact.attrs.get("person"), fact.attrs.get("concept")
        if isinstance(p, str) and isinstance(c, str):
            lst = self.facts.setdefault((p, c), [])
            if fact.id not in lst:
                lst.append(fact.id)
        self.add_support(fact.id, fact.grounded_in)

    def add_support(self, fact_id: str, events: Iterable[str]) -> None:
        for ev in events:
            self.support.setdefault(ev, set()).add(fact_id)

    def merged(self, keep: str, absorb: str) -> None:
        """Node ``absorb`` was merged into ``keep`` (a concept or a person): re-key."""
        moved = self.events.pop(absorb, None)
        if moved:
            mine = self.events.setdefault(keep, {})
            for p, lst in moved.items():
                mine[p] = sorted(set(mine.get(p, [])) | set(lst))
        for by_person in self.events.values():
            if absorb in by_person:
                by_person[keep] = sorted(set(by_person.get(keep, []))
                                         | set(by_person.pop(absorb)))
        for (p, c) in [k for k in self.facts if absorb in k]:
            ids = self.facts.pop((p, c))
            key = (keep if p == absorb else p, keep if c == absorb else c)
            self.facts[key] = list(dict.fromkeys([*self.facts.get(key, []), *ids]))

    def sync_aliases(self, graph: WorkingGraph) -> list[tuple[str, str]]:
        """Apply merges made since the last sync (by plans or passes); returns them."""
        items = list(itertools.islice(graph.aliases.items(), self.aliases_seen, None))
        self.aliases_seen = len(graph.aliases)
        for old, new in items:
            self.merged(graph.resolve(new), old)
        return items

    def pairs(self) -> list[tuple[str, str]]:
        return sorted((p, c) for c, by in self.events.items() for p in by)


class _Consolidator:
    def __init__(self, graph: WorkingGraph, settings: Settings, stamp: Stamp,
                 index: FactIndex, writer: FactWriter | None,
                 terms: TermStats | None = None) -> None:
        self.g, self.s, self.stamp, self.index, self.writer = graph, settings, stamp, index, writer
        self.terms = terms
        self.window = settings.fact_window_days * DAY
        self.result = FactResult()
        self._pairs: dict[str, tuple[set[str], set[str]]] = {}
        self._fact_ids: dict[tuple[str, str], set[str]] = {}
        self._formed: set[str] = set()
        self._extended: set[str] = set()

    # ---------------------------------------------------------------- reading
    def pairs(self, ev: str) -> tuple[set[str], set[str]]:
        got = self._pairs.get(ev)
        if got is None:
            people, concepts = event_pairs(self.g, ev) if ev in self.g.nodes else ([], [])
            got = (set(people), set(concepts))
            self._pairs[ev] = got
        return got

    def events_in(self, p: str, c: str, lo: float, hi: float, *, free: bool = False
                  ) -> list[tuple[float, str]]:
        """Events of (p, c) with lo ≤ ts ≤ hi, checked against the graph; ``free``: only
        those that support no fact of (p, c) yet (checked first: it is the cheaper test)."""
        lst = self.index.events.get(c, {}).get(p, [])
        i, j = bisect.bisect_left(lst, (lo, "")), bisect.bisect_right(lst, (hi, "\uffff"))
        out = []
        for ts, ev in lst[i:j]:
            if free and self.supported(ev, p, c):
                continue
            people, concepts = self.pairs(ev)
            if p in people and c in concepts:
                out.append((ts, ev))
        return out

    def facts_of(self, p: str, c: str) -> list[Node]:
        ids = self.index.facts.get((p, c), [])
        found = [self.g.nodes[f] for f in dict.fromkeys(self.g.resolve(x) for x in ids)
                 if f in self.g.by_kind[NodeKind.FACT]]
        self.index.facts[(p, c)] = [f.id for f in found]
        return found

    def supported(self, ev: str, p: str, c: str) -> bool:
        """Does ``ev`` already support a fact of (p, c)?"""
        fids = self.index.support.get(ev)
        if not fids:
            return False
        mine = self._fact_ids.get((p, c))
        if mine is None:
            mine = {f.id for f in self.facts_of(p, c)}
            self._fact_ids[(p, c)] = mine
        return not fids.isdisjoint(mine)

    # ------------------------------------------------------------- settling
    def settle(self, p: str, c: str, seeds: Sequence[tuple[float, str]]) -> None:
        """Form or extend the facts of (p, c) so that each seed event is accounted for."""
        for ts, ev in sorted(seeds):
            self.result.visited += 1
            if self.supported(ev, p, c):
                continue
            people, concepts = self.pairs(ev)
            if p not in people or c not in concepts:
                continue
            covering = [f for f in self.facts_of(p, c)
                        if float(f.attrs["first"]) - self.window <= ts
                        <= float(f.attrs["last"]) + self.window]
            if covering:
                fact = min(covering, key=lambda f: (min(abs(ts - float(f.attrs["first"])),
                                                        abs(ts - float(f.attrs["last"]))), f.id))
                self.close(self.extend(fact, [ev], p, c), p, c, [ev])
                continue
            cand = self.events_in(p, c, ts - self.window, ts + self.window, free=True)
            stamps = [x[0] for x in cand]
            best: list[tuple[float, str]] = []
            for i, start in enumerate(stamps):
                if start > ts:
                    break
                j = bisect.bisect_right(stamps, start + self.window)
                if j - i > len(best):
                    best = cand[i:j]
            if len(best) >= self.s.fact_min_events:
                members = [e for _, e in best]
                self.close(self.form(p, c, members), p, c, members)

    def close(self, fact: Node, p: str, c: str, added: Sequence[str]) -> None:
        """Extend ``fact`` with every event within the window of the events just ``added``,
        and so on, until none is left.

        Consecutive supporters of a fact are never more than the window apart (a fact starts
        as a window and grows by events within the window of its envelope), so any event the
        grown envelope now reaches lies within the window of one of the new supporters: the
        search never has to look at the fact's whole history.
        """
        frontier = list(added)
        seen = set(frontier)  # each event joins the frontier once: the walk always ends
        while frontier:
            more: dict[str, None] = {}
            for ev in frontier:
                ts = self.g.nodes[ev].ts
                for _, other in self.events_in(p, c, ts - self.window, ts + self.window,
                                               free=True):
                    if other not in seen:
                        more[other] = None
            if not more:
                return
            seen.update(more)
            fact = self.extend(fact, list(more), p, c)
            frontier = list(more)

    # ------------------------------------------------------------- writing
    def centroid(self, events: Iterable[str]) -> np.ndarray | None:
        return self.g.event_centroid(events)

    def llm_statement(self, person: str, theme: str, events: list[str]) -> str | None:
        """The writer's sentence (LLM mode); None without a writer or when it fails."""
        if self.writer is None:
            return None
        texts = central_texts(self.g, events)
        try:
            text = " ".join(str(self.writer(texts[:self.s.fact_writer_events], subject=person,
                                            concept=theme)).split())
        except EnfoldError as exc:
            self.result.writer_failures += 1
            log.warning("fact writer failed, using the template statement: %s", exc)
            return None
        return text[: self.s.max_node_text] or None

    def templated(self, attrs: dict[str, Any], events: Sequence[str]) -> str:
        """The template statement; its phrases are read again when the support has
        doubled since they were."""
        reread = int(attrs["support"]) >= 2 * int(attrs.get("phrased_at") or 0)
        return templated(self.g, attrs, events, self.terms, self.s, reread=reread)

    def support_edges(self, fact_id: str, events: Iterable[str]) -> None:
        prior = ONTOLOGY[EdgeType.SUPPORTED_BY].prior
        for ev in events:
            if self.g.edge(fact_id, EdgeType.SUPPORTED_BY, ev) is None:
                self.g.put_edge(Edge(self.g.namespace, fact_id, ev, EdgeType.SUPPORTED_BY,
                                     prior, self.stamp.at, self.stamp.at, self.stamp.plan_id))

    def form(self, p: str, c: str, events: list[str]) -> Node:
        g = self.g
        events = sorted(dict.fromkeys(events), key=lambda e: (g.nodes[e].ts, e))
        times = [g.nodes[e].ts for e in events]
        person, theme = g.nodes[p].text, g.nodes[c].text
        written = self.llm_statement(person, theme, events)
        attrs: dict[str, Any] = {
            "first": min(times), "last": max(times), "support": len(events),
            "key": f"{p}|{c}", "person": p, "concept": c, "subject": person, "theme": theme,
            "statement_by": "template" if written is None else "llm",
        }
        text = self.templated(attrs, events) if written is None else written
        at = self.stamp.at
        fact = Node(new_id(NodeKind.FACT), g.namespace, NodeKind.FACT, text, attrs,
                    tuple(events), at, at, at, 0, self.stamp.plan_id)
        g.put_node(fact)
        self.support_edges(fact.id, events)
        related = ONTOLOGY[EdgeType.RELATED_TO].prior
        for other in (c, p):
            g.put_edge(Edge(g.namespace, fact.id, other, EdgeType.RELATED_TO, related, at, at,
                            self.stamp.plan_id))
        vec = self.centroid(events)
        if vec is not None:
            g.set_vector(fact.id, vec)
        self.stamp.op(g, "ADD_NODE", fact.id, None, fact.to_dict(),
                      f"consolidation: {len(events)} events of {person!r} on {theme!r} within "
                      f"{self.s.fact_window_days:g} days")
        self.index.add_fact(fact)
        self._fact_ids.setdefault((p, c), set()).add(fact.id)
        self._formed.add(fact.id)
        self.result.formed += 1
        return fact

    def extend(self, fact: Node, events: list[str], p: str, c: str) -> Node:
        """Add ``events`` to the support of ``fact``, the fact of (person p, concept c)."""
        g = self.g
        new = [e for e in dict.fromkeys(events)
               if fact.id not in self.index.support.get(e, ())]
        if not new:
            return fact
        new.sort(key=lambda e: (g.nodes[e].ts, e))
        times = [g.nodes[e].ts for e in new]
        attrs = {**fact.attrs, "person": p, "concept": c, "key": f"{p}|{c}",
                 "first": min(float(fact.attrs["first"]), *times),
                 "last": max(float(fact.attrs["last"]), *times),
                 "support": len(fact.grounded_in) + len(new)}
        attrs.pop("stale", None)
        support = (*fact.grounded_in, *new)
        text = (self.templated(attrs, support) if attrs.get("statement_by") != "llm"
                else fact.text)
        if text != fact.text:
            attrs["statement_by"] = "template"
        updated = fact.with_changes(text=text, attrs=attrs, grounded_in=support,
                                    updated_at=self.stamp.at)
        g.put_node(updated)
        self.support_edges(fact.id, new)
        add = self.centroid(new)
        old = g.node_vectors.get(fact.id)
        if add is not None:
            g.set_vector(fact.id, add * len(new) if old is None
                         else old * len(fact.grounded_in) + add * len(new))
        changed = sorted(k for k in set(attrs) | set(fact.attrs)
                         if attrs.get(k) != fact.attrs.get(k))
        # The op-log diff, as node_diff writes it, without walking the whole support.
        before: dict[str, Any] = {"id": fact.id, "attrs": {k: fact.attrs.get(k) for k in changed}}
        after: dict[str, Any] = {"id": fact.id, "attrs": {k: attrs.get(k) for k in changed},
                                 "grounded_in_added": new}
        if text != fact.text:
            before["text"], after["text"] = fact.text, text
        self.stamp.op(g, "UPDATE_NODE", fact.id, before, after,
                      f"consolidation: {len(new)} more event(s) support the fact")
        self.index.add_support(fact.id, new)
        if fact.id not in self._formed and fact.id not in self._extended:
            self._extended.add(fact.id)
            self.result.extended += 1
        return updated


def central_texts(graph: WorkingGraph, events: list[str]) -> list[str]:
    """Texts of ``events``, the one closest to their centroid first."""
    c = graph.event_centroid(events)
    order = list(events)
    if c is not None:
        sims = graph.event_vectors.similarities(c, events)
        order.sort(key=lambda e: (-sims.get(e, -2.0), graph.nodes[e].ts))
    return [graph.nodes[e].text for e in order]


def recurring_phrases(graph: WorkingGraph, events: Sequence[str], terms: TermStats | None,
                      subject: str, settings: Settings) -> list[str]:
    """The ``fact_phrases`` phrases the supporting events share, most distinctive first
    (read from the ``fact_phrase_events`` most central of them), without the subject's
    own name."""
    ids = list(events)
    gist = settings.fact_phrases
    texts = central_texts(graph, ids)[:settings.fact_phrase_events]
    own = {t.lower() for t in tokens(subject)}
    stats = terms or TermStats()
    # The noun phrases a concept's label is chosen from (the namespace's phrase vectors),
    # else key phrases.
    named = theme_name(texts, stats, k=gist + 2, centroid=graph.event_centroid(ids),
                       vectors=ThemeNamer.of(graph).vectors, settings=settings)
    phrases = named.keywords if named is not None else theme_phrases(
        texts, stats, k=gist + 1)
    return [p for p in phrases
            if not {t.lower() for t in tokens(p)} <= own][:gist]


def templated(graph: WorkingGraph, attrs: dict[str, Any], events: Sequence[str],
              terms: TermStats | None, settings: Settings, *, reread: bool) -> str:
    """A fact's template statement from ``attrs`` (``subject``, ``theme``, ``support``,
    ``first``, ``last``) and its supporting ``events``. ``reread`` (or no phrases yet): the
    recurring phrases are read from the events again (``attrs`` gains ``phrases`` and
    ``phrased_at``); at most ``max_node_text`` characters."""
    if reread or "phrases" not in attrs:
        attrs["phrases"] = recurring_phrases(graph, events, terms, str(attrs["subject"]),
                                             settings)
        attrs["phrased_at"] = int(attrs["support"])
    return template_statement(str(attrs["subject"]), str(attrs["theme"]),
                              int(attrs["support"]), float(attrs["first"]),
                              float(attrs["last"]), attrs["phrases"])[:settings.max_node_text]


def _day(ts: float) -> datetime:
    return datetime.fromtimestamp(ts, tz=UTC)


def span_text(first: float, last: float) -> str:
    """A date range in words: ``3 Mar 2026``, ``3 – 20 Mar 2026``, ``3 Mar – 20 Apr 2026``,
    ``30 Dec 2025 – 2 Jan 2026`` (UTC dates)."""
    a, b = _day(first), _day(last)
    if a.date() == b.date():
        return f"{a.day} {a:%b %Y}"
    if (a.year, a.month) == (b.year, b.month):
        return f"{a.day} – {b.day} {b:%b %Y}"
    if a.year == b.year:
        return f"{a.day} {a:%b} – {b.day} {b:%b %Y}"
    return f"{a.day} {a:%b %Y} – {b.day} {b:%b %Y}"


def template_statement(subject: str, theme: str, support: int, first: float, last: float,
                       phrases: Sequence[str]) -> str:
    """What a fact's recurring evidence says, by template: who, which theme, how many
    accounts over which dates, and the phrases they share —
    ``"Maya · Marathon training: 6 accounts, 3 Mar – 20 Apr 2026 (long run; river path)"``.
    Never one event's words under a name."""
    text = f"{subject} · {theme}: {support} account{'s' if support != 1 else ''}, " \
           f"{span_text(first, last)}"
    shown = [p for p in phrases if p.lower() not in theme.lower()]
    return f"{text} ({'; '.join(shown)})" if shown else text


def trim(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    cut = flat[: limit - 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 2 else cut).rstrip(" ,;:") + "…"


def consolidate_facts(
    graph: WorkingGraph,
    settings: Settings,
    stamp: Stamp,
    index: FactIndex,
    *,
    events: Iterable[str] | None = None,
    keys: Iterable[tuple[str, str]] = (),
    writer: FactWriter | None = None,
    terms: TermStats | None = None,
) -> FactResult:
    """Form and extend facts for the events of ``events`` (every event when None) and for
    every event of the (person, concept) ``keys`` (e.g. after a merge joined two concepts);
    ``terms``: the namespace's term statistics (how distinctive a recurring phrase is).
    ``index`` must reflect the graph (see :class:`FactIndex`). Runs inside an open graph
    transaction."""
    work = _Consolidator(graph, settings, stamp, index, writer, terms)
    seeds: dict[tuple[str, str], list[tuple[float, str]]] = {}
    if events is None:
        for p, c in index.pairs():
            seeds[(p, c)] = index.events[c][p]
    else:
        for ev in dict.fromkeys(events):
            if ev not in graph.by_kind[NodeKind.EVENT]:
                continue
            for p, c in index.add_event(graph, ev):
                seeds.setdefault((p, c), []).append((graph.nodes[ev].ts, ev))
    for p, c in keys:
        if c in index.events and p in index.events[c]:
            seeds[(p, c)] = index.events[c][p]
    for (p, c) in sorted(seeds):
        work.settle(p, c, list(seeds[(p, c)]))
    return work.result
