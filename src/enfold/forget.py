"""Forgetting an event: delete it and everything derived from it, its words included.

:func:`forget_event` runs inside an open graph transaction:

* the event goes, with its edges and vector;
* concepts, intents, facts and claims lose it from their provenance, and those left with no
  grounding event go; a concept's and a fact's vector become the centroid of the events left;
* a survivor whose text still carries words of the forgotten event — a concept labelled or
  summarised from it, an intent stating its obligation, a fact quoting it, a claim worded by
  it, a person named only there — is rebuilt from its remaining evidence by the builders that
  made it (key phrases and the central text for a concept, the obligation clause of a
  remaining statement for an intent, the template statement for a fact, the clause of a
  remaining utterance for a claim), or removed when that evidence cannot rebuild it. Nodes
  that copy a rebuilt node's text follow (a fact's theme, a habit's "Keep up: …", a goal's
  label, a parent theme's summary); any other attribute text carrying the words is dropped;
* people and time anchors left without an edge go;
* the op log of every removed node, and of the ids merged into it, is erased, with those
  merge aliases. A single FORGET record remains, without text.

Which texts carry the words is a :class:`~enfold.write.traces.Trace` per survivor: a word of
the forgotten event that none of the node's remaining evidence (its events' texts, speakers
and participants) contains, or a verbatim quote of the forgotten text. The survivors' traces
are returned, so that their op-log records are redacted too
(:func:`~enfold.write.traces.redact_record`): the store holds those, not the graph.

:func:`forget` is the whole of it for a namespace's session: it asks the store what the
graph cannot know (which of the event's words no other event holds, which embedders cached
its vector), runs :func:`forget_event` in a graph transaction and commits the changes, the
cache entries to purge, the dropped aliases and the redacted op records in one store
transaction. Holding the namespace (its lease and lock) is the caller's part:
:meth:`enfold.memory.Memory.forget`.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from enfold.consolidate.facts import templated
from enfold.errors import NotFound
from enfold.graph import WorkingGraph
from enfold.intents import cached_links, goal_template, habit_label, symmetric
from enfold.model import GROUNDED_KINDS, EdgeType, Node, NodeKind, OpRecord, now
from enfold.session import NamespaceSession
from enfold.settings import Settings
from enfold.store.base import Store
from enfold.text.annotate import annotate
from enfold.text.claims import extract_claims, predicate_family, target_key
from enfold.text.goals import goal_of
from enfold.text.speakers import speaker_name
from enfold.write.apply import label_similarity
from enfold.write.fold import PASSAGES_VERSION, passages_hash, text_hash
from enfold.write.naming import ThemeNamer
from enfold.write.people_index import PeopleIndex
from enfold.write.planner_local import LocalPlanner, PlannerState, _central_text
from enfold.write.traces import (
    REDACTED,
    TEXT_ATTRS,
    Trace,
    redact_payload,
    redact_record,
    strings,
    words,
)

__all__ = ["Retraction", "forget", "forget_event"]

_RETRACTABLE = GROUNDED_KINDS | {NodeKind.CLAIM}
# Rebuild order: what others copy first (a fact's theme is its concept's label, a parent
# theme's summary names its child, a habit's label is its concept's).
_ORDER = {NodeKind.PERSON: 0, NodeKind.TIME: 0, NodeKind.CONCEPT: 1, NodeKind.CLAIM: 2,
          NodeKind.FACT: 3, NodeKind.INTENT: 4}


def _texts(node: Node) -> Iterator[str]:
    """The texts of a node: its text (not a time's normalized value) and text attributes."""
    if node.kind is not NodeKind.TIME:
        yield node.text
    for key in TEXT_ATTRS.get(node.kind, ()):
        value = node.attrs.get(key)
        if key == "history":
            yield from (e["reason"] for e in value or () if isinstance(e, dict)
                        and isinstance(e.get("reason"), str))
        else:
            yield from strings(value)


def _clean(node: Node, trace: Trace, keep: Collection[str] = ()) -> Node:
    """``node`` without the attribute texts that carry the words (but those in ``keep``,
    rebuilt just now): a tainted string attribute goes, a tainted list item is dropped, a
    history entry's tainted reason becomes :data:`REDACTED`."""
    attrs = dict(node.attrs)
    for key in TEXT_ATTRS.get(node.kind, ()):
        value = attrs.get(key)
        if key in keep or value is None:
            continue
        if isinstance(value, str):
            if trace.taints(value):
                attrs.pop(key)
        elif key == "history" and isinstance(value, list):
            attrs[key] = [{**e, "reason": REDACTED} if isinstance(e, dict)
                          and isinstance(e.get("reason"), str) and trace.taints(e["reason"])
                          else e for e in value]
        elif isinstance(value, list):
            attrs[key] = [v for v in value if not (isinstance(v, str) and trace.taints(v))]
    return node.with_changes(attrs=attrs)


@dataclass
class Retraction:
    """What :func:`forget_event` did: ids removed, updated (provenance retracted or text
    rebuilt) and rebuilt; the traces of the survivors it looked at (their op-log records
    may hold the words); the merge aliases it dropped with the nodes they led to."""

    event: str
    removed: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    rebuilt: list[str] = field(default_factory=list)
    traces: dict[str, Trace] = field(default_factory=dict)
    #: Traces set aside when a neighbour's rebuild made a node look again: the words they
    #: found still must leave the node's op log.
    earlier: dict[str, list[Trace]] = field(default_factory=dict)
    unaliased: list[str] = field(default_factory=list)

    def all_traces(self) -> list[tuple[str, Trace]]:
        """Every trace of every survivor: the current one and those set aside."""
        return [*self.traces.items(),
                *((nid, t) for nid, ts in self.earlier.items() for t in ts)]

    def report(self) -> dict[str, Any]:
        return {"event": self.event, "removed": self.removed, "updated": self.updated,
                "rebuilt": self.rebuilt}


def forget(session: NamespaceSession, event_id: str, *, settings: Settings,
           embedder: str | None = None, at: float | None = None) -> dict[str, Any]:
    """Forget the event ``event_id`` of the session's namespace, in its working graph and
    its store (hold the session's lock, and the namespace's lease). ``embedder``: the name
    of the memory's embedder, whose cache entry for the text goes too (with those of every
    embedder the store cached it for). Returns ``{"event", "removed", "updated",
    "rebuilt"}``; raises :class:`NotFound` when the namespace has no such event.

    On a failure the graph rolls back and the session drops it (the derived state moved
    with it): the next use reloads it from the store, which committed nothing."""
    store, ns = session.store, session.namespace
    node = store.get_node(ns, event_id)
    if node is None or node.kind is not NodeKind.EVENT:
        raise NotFound(f"no event {event_id!r} in namespace {ns!r}")
    mine = words(node.text)
    unique = mine - store.event_words(ns, mine, exclude=node.id)
    models = set(store.cache_models(ns))
    if embedder is not None:
        models.add(embedder)
    g = session.graph()
    g.begin()
    try:
        retraction = forget_event(g, node, at=now() if at is None else at, settings=settings,
                                  unique=unique)
        changes = g.changes()
        changes.purge_cache.update(h for m in models for h in (
            text_hash(m, node.text),
            *(passages_hash(m, node.text, v) for v in range(1, PASSAGES_VERSION + 1))))
        with store.transaction():
            store.commit(ns, changes)
            store.drop_aliases(ns, retraction.unaliased)
            store.redact_ops(ns, _redactions(store, g, retraction))
    except BaseException:
        g.rollback()
        session.drop()  # derived state moved with the graph: reload
        raise
    g.commit()
    return retraction.report()


def _redactions(store: Store, g: WorkingGraph, retraction: Retraction) -> list[OpRecord]:
    """The op records of the survivors (and of the ids merged into them) that hold the
    forgotten words, redacted."""
    merged: dict[str, list[str]] = {}
    out: dict[int, OpRecord] = {}
    for node_id, trace in retraction.all_traces():
        probes = trace.probes()
        if not probes:
            continue
        if not merged and g.aliases:
            for old in g.aliases:
                merged.setdefault(g.resolve(old), []).append(old)
        for record in store.history_matching(g.namespace, [node_id, *merged.get(node_id, [])],
                                             probes):
            new = redact_record(out.get(record.seq, record), trace)
            if new is not None:
                out[record.seq] = new
    return list(out.values())


def forget_event(graph: WorkingGraph, event: Node, *, at: float,
                 settings: Settings | None = None, unique: Collection[str] = ()
                 ) -> Retraction:
    """Apply the retraction of ``event`` to ``graph`` inside its open transaction.

    ``unique``: the event's :func:`words` that no other event of the namespace holds (a
    store answers that; see :meth:`enfold.store.base.Store.event_words`)."""
    return _Forgetting(graph, event, settings or Settings(), at, unique).run()


class _Forgetting:
    def __init__(self, graph: WorkingGraph, event: Node, settings: Settings, at: float,
                 unique: Collection[str]) -> None:
        self.g, self.ev, self.s, self.at = graph, event, settings, at
        self.unique = frozenset(unique)
        self.out = Retraction(event.id)
        self.before: dict[str, Node] = {}  # survivors as they were, for the op log
        self.reasons: dict[str, str] = {}

    # ------------------------------------------------------------------ reading
    def events(self, ids: Iterable[str]) -> list[str]:
        known = self.g.by_kind[NodeKind.EVENT]
        return [e for e in dict.fromkeys(ids) if e in known]

    def adjacent_events(self, node_id: str) -> Iterator[str]:
        known = self.g.by_kind[NodeKind.EVENT]
        for other, _ in self.g.neighbors(node_id):
            if other in known:
                yield other

    def evidence_ids(self, node: Node) -> Iterator[str]:
        if node.kind in _RETRACTABLE:
            yield from self.events(node.grounded_in)
        if node.kind is not NodeKind.CONCEPT:  # a concept's edges are its grounding again
            yield from self.adjacent_events(node.id)

    def sources(self, node: Node) -> list[str]:
        """The nodes whose text ``node`` copies: a fact's concept and person, a habit's
        concept, a goal's concepts, a parent theme's children, a claim's holder."""
        g, a = self.g, node.attrs
        if node.kind is NodeKind.FACT:
            ids = [a.get("concept"), a.get("person")]
        elif node.kind is NodeKind.INTENT:
            ids = [a.get("concept"), *(a.get("concepts") or ())]
        elif node.kind is NodeKind.CONCEPT:
            ids = [e.src for e in g.in_edges(node.id) if e.type is EdgeType.PART_OF]
        elif node.kind is NodeKind.CLAIM:
            ids = [e.src for e in g.in_edges(node.id) if e.type is EdgeType.HOLDS]
        else:
            ids = []
        found = (g.resolve(i) for i in ids if isinstance(i, str))
        return [i for i in dict.fromkeys(found) if i in g.nodes and i != node.id]

    def evidence(self, node: Node) -> Iterator[str]:
        """The words a node still rests on: its events' texts, speakers and participants,
        and the text of the nodes it copies (as they are when it is looked at)."""
        for i in self.sources(node):
            yield self.g.nodes[i].text
        for e in self.evidence_ids(node):
            ev = self.g.nodes[e]
            yield ev.text
            meta = ev.attrs.get("meta")
            people = meta.get("participants") if isinstance(meta, dict) else None
            yield " ".join([str(ev.attrs.get("source") or ""),
                            *(p for p in people or () if isinstance(p, str))])

    def trace(self, node: Node) -> Trace:
        found = self.out.traces.get(node.id)
        if found is None:
            found = self.out.traces[node.id] = Trace(
                self.ev.text, self.evidence(node), self.unique,
                quote=self.s.forget_quote_chars, min_quote=self.s.forget_min_quote_chars)
            found.derived = node.kind in _RETRACTABLE
        return found

    def terms(self) -> PlannerState:
        return LocalPlanner(self.s).state(self.g)

    # ------------------------------------------------------------------ writing
    def put(self, node: Node, reason: str) -> None:
        self.before.setdefault(node.id, self.g.nodes[node.id])
        self.reasons[node.id] = reason
        self.g.put_node(node.with_changes(updated_at=self.at))

    def remove(self, node_id: str) -> set[str]:
        """Remove a node, and the people and time anchors it leaves without an edge;
        returns its other non-event neighbours (they may follow)."""
        near = {o for o, _ in self.g.neighbors(node_id)} - {self.ev.id}
        self.g.remove_node(node_id)
        self.out.removed.append(node_id)
        self.before.pop(node_id, None)
        self.out.traces.pop(node_id, None)
        near -= self.sweep(near)
        return {o for o in near if o not in self.g.by_kind[NodeKind.EVENT]}

    # --------------------------------------------------------------------- run
    def run(self) -> Retraction:
        g, ev = self.g, self.ev.id
        folded = ev in g.nodes
        if folded:  # the local planner's term statistics forget its words too
            state = g.indexes.get(PlannerState)
            if state is not None:
                state.terms.remove(self.ev.text)
                state.pending = deque(e for e in state.pending if e != ev)
                state.recent = deque((e for e in state.recent if e != ev),
                                     maxlen=state.recent.maxlen)
        dependants = {n for n, _ in g.neighbors(ev)}
        dependants |= {nid for kind in _RETRACTABLE for nid in g.of_kind(kind)
                       if ev in g.grounded(nid)}
        g.remove_node(ev)
        self.sweep(dependants)
        check: set[str] = set()
        for nid in sorted(dependants):
            node = g.nodes.get(nid)
            if node is None or node.kind is NodeKind.EVENT:
                continue
            check.add(nid)
            if node.kind in _RETRACTABLE:
                check |= self.retract(node)
            elif ev in node.grounded_in:  # a person or time anchor other events still name
                self.put(node.with_changes(
                    grounded_in=tuple(e for e in node.grounded_in if e != ev)),
                    "forget(): provenance retracted")
        self.rebuild_all(check)
        self.log()
        return self.out

    def retract(self, node: Node) -> set[str]:
        """Take the event out of a derived node's provenance; returns the ids to check
        again (the neighbours of a node that went)."""
        remaining = tuple(self.events(e for e in node.grounded_in if e != self.ev.id))
        if not remaining:
            return self.remove(node.id)
        attrs = dict(node.attrs)
        if node.kind in (NodeKind.CONCEPT, NodeKind.FACT):
            vec = self.g.event_centroid(remaining)
            if vec is not None:
                self.g.set_vector(node.id, vec)
        if node.kind is NodeKind.CONCEPT:
            attrs["event_count"] = len(remaining)
            attrs["last_ts"] = max(self.g.nodes[e].ts for e in remaining)
        if node.kind is NodeKind.INTENT and attrs.get("resolved_by") == self.ev.id:
            attrs.pop("resolved_by")  # (the status stays: see docs/forgetting.md)
        if node.kind is NodeKind.FACT:
            times = [self.g.nodes[e].ts for e in remaining]
            attrs.update(first=min(times), last=max(times), support=len(remaining),
                         stale=True)
        self.put(node.with_changes(grounded_in=remaining, attrs=attrs),
                 "forget(): provenance retracted")
        return set()

    def rebuild_all(self, ids: set[str]) -> None:
        """Rebuild every node in ``ids`` whose text carries the words, then the nodes that
        copy a rebuilt one's text, until none is left."""
        pending = set(ids)
        rounds = 0
        while pending and rounds < 8:  # each round follows one more copy of a copy
            rounds += 1
            nodes = [self.g.nodes[i] for i in pending if i in self.g.nodes]
            nodes.sort(key=lambda n: (_ORDER.get(n.kind, 9), int(n.attrs.get("level") or 0),
                                      n.id))
            pending = set()
            for node in nodes:
                node = self.g.nodes.get(node.id) or node
                if node.id not in self.g.nodes or not self.tainted(node):
                    continue
                near = {o for o, _ in self.g.links(node.id)}
                new = self.rebuild(node, self.trace(node))
                if new is None:
                    pending |= self.remove(node.id)
                elif (new.text, new.attrs) != (node.text, node.attrs):
                    self.out.rebuilt.append(node.id)
                    self.put(new, "forget(): rebuilt from the remaining evidence")
                    for other in near:  # they read this node's old text: look again
                        seen = self.out.traces.pop(other, None)
                        if seen is not None and seen.needles():
                            self.out.earlier.setdefault(other, []).append(seen)
                    pending |= near

    def tainted(self, node: Node) -> bool:
        trace = self.trace(node)
        return trace.taints_any(_texts(node))

    # ----------------------------------------------------------------- rebuilders
    def rebuild(self, node: Node, trace: Trace) -> Node | None:
        """The node rebuilt from its remaining evidence (None: it cannot be)."""
        build = {NodeKind.CONCEPT: self.concept, NodeKind.INTENT: self.intent,
                 NodeKind.FACT: self.fact, NodeKind.CLAIM: self.claim,
                 NodeKind.PERSON: self.person}.get(node.kind)
        new = node if build is None else build(node, trace)
        if new is None:
            return None
        trace.support(new.text)
        rebuilt = [k for k in TEXT_ATTRS.get(node.kind, ()) if k != "aliases"
                   and new.attrs.get(k) != node.attrs.get(k)]
        new = _clean(new, trace, keep=rebuilt)
        aliases = new.attrs.get("aliases")
        if isinstance(aliases, list) and new.text in aliases:  # a spare name became the name
            new = new.with_changes(attrs={**new.attrs,
                                          "aliases": [a for a in aliases if a != new.text]})
        return new

    def concept(self, node: Node, trace: Trace) -> Node | None:
        members = self.events(node.grounded_in)
        attrs = dict(node.attrs)
        text = node.text
        keywords = attrs.get("keywords")
        if trace.taints_any([text, *strings(keywords)]):
            name = ThemeNamer.of(self.g).name(self.g, members[:self.s.forget_label_events],
                                              self.terms().terms, self.s, concept=node.id)
            if not name.keywords:
                return None
            text, attrs["keywords"] = name.label, name.keywords
            trace.support(" ".join(name.keywords))
        summary = attrs.get("summary")
        if isinstance(summary, str) and trace.taints(summary):
            centroid = self.g.event_centroid(members)
            attrs["summary"] = _central_text(self.g, members, centroid)  # type: ignore[arg-type]
            trace.support(attrs["summary"])
        return node.with_changes(text=text, attrs=attrs)

    def intent(self, node: Node, trace: Trace) -> Node | None:
        g, attrs = self.g, dict(node.attrs)
        if not trace.taints(node.text):
            return node.with_changes(attrs=attrs)
        category = attrs.get("category")
        if category == "habit":
            cid = g.resolve(str(attrs.get("concept") or ""))
            if cid not in g.by_kind[NodeKind.CONCEPT]:
                return None
            attrs["concept"] = cid
            text = habit_label(g.nodes[cid], [g.nodes[e].text for e in node.grounded_in
                                              if e in g.by_kind[NodeKind.EVENT]])
        elif category == "goal":
            group = list(dict.fromkeys(g.resolve(str(c)) for c in attrs.get("concepts") or ()))
            group = [c for c in group if c in g.by_kind[NodeKind.CONCEPT]]
            if len(group) < 2:
                return None
            attrs["concepts"] = sorted(group)
            text = goal_template(g, group, symmetric({c: cached_links(g, c, self.s.intent_recent_events)
                                                   for c in group}))
        else:
            found = self.obligation(node)
            if found is None:
                return None
            text, attrs["clause"] = found
        return node.with_changes(text=text, attrs=attrs)

    def obligation(self, node: Node) -> tuple[str, str] | None:
        """(goal label, clause) of the obligation, in a remaining event that states it,
        closest to the intent's old clause."""
        known = PeopleIndex.of(self.g).known.keys()
        clauses = []
        for e in self.g.in_edges(node.id):
            ev = self.g.nodes.get(e.src)
            if e.type is not EdgeType.TRIGGERS or ev is None or ev.kind is not NodeKind.EVENT:
                continue
            ann = annotate(ev.text, ts=datetime.fromtimestamp(ev.ts, tz=UTC),
                           speaker=speaker_name(ev.attrs.get("source")), known_keys=known)
            clauses += [(goal_of(ob, ev.text)[:200], ob.text[:200]) for ob in ann.obligations]
        if not clauses:
            return None
        said = str(node.attrs.get("clause") or node.text)
        return max(clauses, key=lambda c: label_similarity(c[1], said))

    def fact(self, node: Node, trace: Trace) -> Node | None:
        g, attrs = self.g, dict(node.attrs)
        person = g.nodes.get(g.resolve(str(attrs.get("person") or "")))
        concept = g.nodes.get(g.resolve(str(attrs.get("concept") or "")))
        if person is None:
            return None
        attrs["subject"] = person.text
        if concept is not None:
            attrs["theme"] = concept.text
        text = node.text
        if trace.taints_any([text, *strings(attrs.get("phrases"))]):
            members = self.events(node.grounded_in)
            times = [g.nodes[e].ts for e in members] or [float(attrs.get("first") or 0.0)]
            attrs.update(support=len(members), first=min(times), last=max(times),
                         theme=str(attrs.get("theme") or ""), statement_by="template")
            text = templated(g, attrs, members, self.terms().terms, self.s, reread=True)
        trace.support(" ".join([person.text, str(attrs.get("theme") or "")]))
        return node.with_changes(text=text, attrs=attrs)

    def claim(self, node: Node, trace: Trace) -> Node | None:
        attrs = dict(node.attrs)
        key = str(attrs.get("target_key") or "")
        family = predicate_family(str(attrs.get("predicate") or "think"))
        for e in self.evidence_ids(node):
            ev = self.g.nodes[e]
            for c in extract_claims(ev.text, speaker_name(ev.attrs.get("source"))):
                if target_key(c.target) == key and predicate_family(c.predicate) == family:
                    attrs.update(predicate=c.predicate, stance=c.stance, target=c.target,
                                 target_key=target_key(c.target))
                    trace.support(f"{c.content} {c.target}")
                    return node.with_changes(text=c.content, attrs=attrs)
        if trace.taints(key) or trace.taints(str(attrs.get("target") or "")):
            return None
        spare = [a for a in strings(attrs.get("aliases")) if not trace.taints(a)]
        if not spare:
            return None
        attrs["aliases"] = [a for a in strings(attrs.get("aliases")) if a != spare[0]]
        return node.with_changes(text=spare[0], attrs=attrs)

    def person(self, node: Node, trace: Trace) -> Node | None:
        if not trace.taints(node.text):
            return node
        spare = [a for a in strings(node.attrs.get("aliases")) if not trace.taints(a)]
        if spare:
            aliases = [a for a in strings(node.attrs.get("aliases")) if a != spare[0]]
            return node.with_changes(text=spare[0], attrs={**node.attrs, "aliases": aliases})
        kept = [t for t in node.text.split() if not trace.taints(t)]
        return node.with_changes(text=" ".join(kept)) if kept else None

    # ---------------------------------------------------------------- the rest
    def sweep(self, ids: Iterable[str]) -> set[str]:
        """People and time anchors among ``ids`` left without an edge go (only what was
        forgotten tied them in); returns their ids."""
        gone = set()
        for nid in sorted(ids):
            node = self.g.nodes.get(nid)
            if node is not None and node.kind in (NodeKind.PERSON, NodeKind.TIME) \
                    and self.g.degree(nid) == 0:
                self.remove(nid)
                gone.add(nid)
        return gone

    def log(self) -> None:
        """Op records: the survivors' changes (their old text redacted), the erased
        history of what went, and the FORGET record."""
        g, out = self.g, self.out
        for nid, old in self.before.items():
            new = g.nodes[nid]
            out.updated.append(nid)
            payload = old.to_dict()
            for trace in (self.trace(old), *out.earlier.get(nid, ())):
                payload = redact_payload(payload, trace)
            g.add_op(OpRecord(g.namespace, 0, "forget", "UPDATE_NODE", nid, payload,
                              new.to_dict(), self.reasons[nid], self.at))
        out.rebuilt = [i for i in dict.fromkeys(out.rebuilt) if i in g.nodes]
        gone = set(out.removed)
        out.unaliased = sorted(o for o in g.aliases if g.resolve(o) in gone)
        for alias in out.unaliased:
            g.aliases.pop(alias)  # not journalled: a failed forget discards the whole graph
        changes = g.changes()
        changes.purge_history.update([self.ev.id, *out.removed, *out.unaliased])
        g.add_op(OpRecord(g.namespace, 0, "forget", "FORGET", self.ev.id, None,
                          {"removed": out.removed, "updated": out.updated}, "forget()",
                          self.at))
