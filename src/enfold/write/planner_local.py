"""The local planner: folds events into the graph with no LLM.

For each event it writes an UpdatePlan that

* ties in the people (speaker: PARTICIPATES; named: MENTIONS; present participants from
  ``meta["participants"]``: PARTICIPATES), the time anchors it mentions (MENTIONS), and the
  claims it carries (a Claim with HOLDS from its holder, SUPPORTED_BY the utterance, ABOUT
  its target when that is a person or concept);
* turns an explicit obligation into an intent (TRIGGERS; DEADLINE_FOR from its due time);
* links an explicit causal statement to the earlier event it most resembles (CAUSES);
* reinforces the nearest concept when the event is close enough to its centroid; otherwise
  keeps the event pending, and when at least ``cluster_min_events`` pending events cluster
  within ``cluster_window_days`` forms a concept labelled by their distinctive key phrases,
  grounded in each of them, under a PART_OF parent when it shares a broader theme with an
  existing concept. Events that never cluster (one-off distractors) stay unfolded.

Thresholds are per embedder and come from the recorded calibration
(:mod:`enfold.write.calibration`).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Collection
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import numpy as np

from enfold.graph import WorkingGraph
from enfold.model import EdgeType, Node, NodeKind
from enfold.plan import AddEdge, AddNode, Operation, UpdateNode, UpdatePlan
from enfold.settings import Settings
from enfold.text.annotate import Annotation, annotate
from enfold.text.claims import ClaimCandidate, target_key
from enfold.text.goals import goal_of
from enfold.text.people import kin_holder, name_key, same_person
from enfold.text.phrases import TermStats, terms, tokens
from enfold.text.speakers import read_source, speaker_name
from enfold.text.themes import entity_words
from enfold.write.apply import label_similarity
from enfold.write.calibration import thresholds_for
from enfold.write.context import ContextAssembler
from enfold.write.naming import ThemeNamer, due_rename
from enfold.write.people_index import PeopleIndex
from enfold.write.views import turned_view

if TYPE_CHECKING:
    from enfold.embed import Embedder
    from enfold.write.apply import ApplyResult

DAY = 86_400.0
_CONCEPT_EDGES = (EdgeType.GROUNDS, EdgeType.REINFORCES)


@dataclass
class PlannerState:
    """What the planner remembers about one namespace between events (rebuildable)."""

    pending: deque[str] = field(default_factory=deque)
    terms: TermStats = field(default_factory=TermStats)
    recent: deque[str] = field(default_factory=lambda: deque(maxlen=50))


def _concept_of(graph: WorkingGraph, event_id: str) -> str | None:
    for e in graph.out_edges(event_id):
        if e.type in _CONCEPT_EDGES and e.dst in graph.by_kind[NodeKind.CONCEPT]:
            return e.dst
    return None


def _revises(ann: Annotation, claim: ClaimCandidate) -> bool:
    """Whether ``claim`` is the view the text says changed: the text says one did, and the
    claim is read from where it says so ("Huw did a good job after all" ends a view of
    Huw's work, not the other views of the same diary entry)."""
    if not ann.revises:
        return False
    span = ann.revised
    if ann.reviser is not None and claim.holder != ann.reviser:
        return False
    return span is None or claim.start < span[1] and span[0] < claim.end


def rebuild_state(graph: WorkingGraph, settings: Settings) -> PlannerState:
    """Reconstruct the planner's memory from the graph (after a restart)."""
    state = PlannerState()
    events = sorted((graph.nodes[i] for i in graph.of_kind(NodeKind.EVENT)), key=lambda n: n.ts)
    for ev in events:
        state.terms.add(ev.text)
        state.recent.append(ev.id)
    if events:
        horizon = events[-1].ts - settings.cluster_window_days * DAY
        for ev in events:
            if ev.ts >= horizon and _concept_of(graph, ev.id) is None:
                state.pending.append(ev.id)
    while len(state.pending) > settings.pending_max:
        state.pending.popleft()
    return state


class LocalPlanner:
    """Rule-and-statistics planner; see the module docstring."""

    name = "local"

    def __init__(self, settings: Settings | None = None, embedder: Embedder | None = None
                 ) -> None:
        self.s = settings or Settings()
        self.embedder = embedder
        self.embedder_name: str | None = getattr(embedder, "name", None)
        cal = thresholds_for(self.embedder_name, self.s)
        self.assign_threshold = self.s.assign_threshold or cal["assign"]
        self.cluster_threshold = self.s.cluster_threshold or cal["cluster"]
        self.parent_threshold = cal["parent"]

    # ------------------------------------------------------------------ state
    def state(self, graph: WorkingGraph) -> PlannerState:
        ThemeNamer.of(graph).use(self.embedder)
        return graph.indexes.of(PlannerState, lambda: rebuild_state(graph, self.s))

    # ------------------------------------------------------------------- plan
    def plan(self, event: Node, graph: WorkingGraph) -> UpdatePlan:
        vec = graph.event_vectors.get(event.id)
        ann = annotate(
            event.text,
            ts=datetime.fromtimestamp(event.ts, tz=UTC),
            speaker=speaker_name(event.attrs.get("source")),
            known_keys=PeopleIndex.of(graph).known.keys(),
            vector=vec, embedder=self.embedder_name,
        )
        if not ann.claims and vec is not None:
            ann = self._turned(event, vec, graph, ann)
        b = _Builder(event, graph)
        people = annotation_ops(b, ann)
        ctx = ContextAssembler.of(graph, self.s).assemble(event, vec, tiers=False,
                                                          nearest=(NodeKind.CONCEPT,))
        concept = self.fold_concept(b, vec, ctx.nearest.get(NodeKind.CONCEPT, []), ann)
        for claim_ref, target in b.claims:
            about = people.get(target) if target else None
            about = about or concept
            if about is not None:
                b.edge(claim_ref, EdgeType.ABOUT, about, "what the claim is about")
        return UpdatePlan(event_id=event.id, namespace=graph.namespace, planner=self.name,
                          reasoning="local rules and statistics", operations=b.ops)

    def _turned(self, event: Node, vec: Any, graph: WorkingGraph, ann: Annotation
                ) -> Annotation:
        """An event of no view that turns against a view its speaker holds (see
        :func:`enfold.write.views.turned_view`) is a view: the speaker's new stance
        on the same target, marked as a change (``revises``) so consolidation supersedes
        the old one."""
        speaker = speaker_name(event.attrs.get("source"))
        pid = _find_person(graph, speaker) if speaker else None
        found = turned_view(graph, event, vec, pid, self.s, embedder=self.embedder_name)
        if found is None:
            return ann
        old, side = found
        a = old.attrs
        claim = ClaimCandidate(
            holder=str(a.get("holder") or speaker), holder_is_speaker=True,
            predicate=str(a.get("predicate") or "think"), content=event.text[:400],
            target=str(a.get("target") or ""), stance=side, reported=False,
            start=0, end=len(event.text))
        return replace(ann, claims=(claim,), revises=True)

    def after_apply(self, event: Node, graph: WorkingGraph, result: ApplyResult) -> None:
        """Keep planner and context state in step with what was applied."""
        st = self.state(graph)
        st.terms.add(event.text)
        st.recent.append(event.id)
        if _concept_of(graph, event.id) is None and event.id not in st.pending:
            st.pending.append(event.id)
        # Events folded into a new concept leave the pending pool.
        formed = [graph.nodes[c] for c in result.created.values()
                  if c in graph.by_kind[NodeKind.CONCEPT]]
        if formed:
            done = {e for c in formed for e in c.grounded_in}
            st.pending = deque(e for e in st.pending if e not in done)
        horizon = event.ts - self.s.cluster_window_days * DAY
        while st.pending and (len(st.pending) > self.s.pending_max or (
                st.pending[0] in graph.nodes and graph.nodes[st.pending[0]].ts < horizon)):
            st.pending.popleft()
        ContextAssembler.of(graph, self.s).note_event(
            [*result.created.values(), *result.reinforced, event.id])

    # ------------------------------------------------------------- concepts
    def fold_concept(self, b: _Builder, vec: np.ndarray | None,
                     nearest: list[tuple[str, float]], ann: Annotation) -> str | None:
        """Reinforce the nearest concept, or form a new one from pending events."""
        if vec is None:
            return None
        g, ev = b.graph, b.event
        if nearest and nearest[0][1] >= self.assign_threshold:
            cid = nearest[0][0]
            b.edge(ev.id, EdgeType.REINFORCES, cid,
                   f"close to the concept's centroid (cosine {nearest[0][1]:.2f})")
            self.rename_if_grown(b, cid)
            return cid
        st = self.state(g)
        horizon = ev.ts - self.s.cluster_window_days * DAY
        pool = [p for p in dict.fromkeys(st.pending)
                if p in g.nodes and p != ev.id and g.nodes[p].ts >= horizon
                and _concept_of(g, p) is None]
        if len(pool) + 1 < self.s.cluster_min_events:
            return None
        sims = g.event_vectors.similarities(vec, pool)
        close = sorted((p for p in pool if sims.get(p, 0.0) >= self.cluster_threshold),
                       key=lambda p: -sims[p])[:15]
        if len(close) + 1 < self.s.cluster_min_events:
            return None
        members = [*close, ev.id]
        texts = [g.nodes[m].text for m in members]
        name = ThemeNamer.of(g).name(g, members, st.terms, self.s)
        ref = b.add(NodeKind.CONCEPT, name.label, members, {
            "keywords": name.keywords,
            "summary": _central_text(g, members, vec),
            "aliases": [],
            "named_at": len(members),
            "last_ts": max(g.nodes[m].ts for m in members),
        }, f"{len(members)} pending events cluster within "
           f"{self.s.cluster_window_days:g} days (cosine ≥ {self.cluster_threshold:.2f})")
        for m in members:
            b.edge(m, EdgeType.GROUNDS, ref, "event grounds the new concept")
        self.place_in_hierarchy(b, ref, members, texts, name.label)
        return ref

    def rename_if_grown(self, b: _Builder, cid: str) -> None:
        """Name the concept anew from its events when it has grown enough since it was
        last named (:func:`enfold.write.naming.due_rename`); parent themes keep theirs."""
        g = b.graph
        node = g.nodes[cid]
        members = [*node.grounded_in, b.event.id]
        if node.attrs.get("level") or not due_rename(node, len(members), self.s.relabel_growth):
            return
        name = ThemeNamer.of(g).name(g, members, self.state(g).terms, self.s,
                                     concept=cid)
        attrs: dict[str, Any] = {"keywords": name.keywords, "named_at": len(members)}
        if name.label != node.text:
            old = [a for a in node.attrs.get("aliases") or [] if a != name.label]
            attrs["aliases"] = list(dict.fromkeys([*old, node.text]))[-8:]
        b.ops.append(UpdateNode(id=cid, text=name.label, attrs=attrs,
                                reasoning=f"renamed: grown to {len(members)} events"))

    def place_in_hierarchy(self, b: _Builder, ref: str, members: list[str],
                           texts: list[str], label: str) -> None:
        """PART_OF a parent when the new concept shares a broader theme with another."""
        g = b.graph
        vecs = [g.event_vectors.get(m) for m in members]
        stack = [v for v in vecs if v is not None]
        if not stack:
            return
        centroid = np.mean(np.stack(stack), axis=0)
        hits = g.nearest(centroid, NodeKind.CONCEPT, 5)
        for cid, cos in hits:
            if cos < self.parent_threshold or cos >= self.s.merge_threshold:
                continue
            parent = next((e.dst for e in g.out_edges(cid) if e.type is EdgeType.PART_OF), None)
            if parent is None and any(e.type is EdgeType.PART_OF for e in g.in_edges(cid)):
                parent = cid  # the neighbour is itself a parent theme
            if parent is not None:
                p = g.nodes[parent]
                b.ops.append(UpdateNode(id=parent, grounded_in=members,
                                        reasoning="parent theme gains a child concept"))
                b.edge(ref, EdgeType.PART_OF, parent,
                       f"shares the broader theme {p.text!r} (cosine {cos:.2f})")
                return
            sibling = g.nodes[cid]
            sib_texts = [g.nodes[e].text for e in sibling.grounded_in if e in g.nodes]
            # A shared theme needs shared distinctive words, not only nearby centroids:
            # phrases must occur on both sides (two "documents": the sibling, the new one).
            shared = shared_phrases(sib_texts, texts, self.state(g).terms,
                                    names=entity_words([*sib_texts, *texts])[1])
            if not shared:
                continue
            both = list(dict.fromkeys([*sibling.grounded_in, *members]))
            name = ThemeNamer.of(g).name(g, both, self.state(g).terms, self.s,
                                         avoid=[label])
            if max(label_similarity(name.label, sibling.text),
                   label_similarity(name.label, label)) >= self.s.merge_threshold:
                continue
            pref = b.add(NodeKind.CONCEPT, name.label, both, {
                "keywords": list(dict.fromkeys([*name.keywords, *shared])),
                "summary": f"broader theme of {sibling.text!r} and a newer concept",
                "aliases": [], "level": 1,
                "last_ts": max(g.nodes[e].ts for e in both if e in g.nodes),
            }, f"two concepts share a broader theme (cosine {cos:.2f}, shared {shared})")
            b.edge(cid, EdgeType.PART_OF, pref, "child of the shared theme")
            b.edge(ref, EdgeType.PART_OF, pref, "child of the shared theme")
            return


def shared_phrases(a: list[str], b: list[str], stats: TermStats, k: int = 2,
                   names: Collection[str] = ()) -> list[str]:
    """Distinctive phrases that recur (in ≥ 2 events) on both sides: a shared theme.

    A phrase made only of the words of ``names`` does not count: two concepts that mention
    the same person share the person, not a theme."""
    def counts(texts: list[str]) -> Counter[str]:
        c: Counter[str] = Counter()
        for t in texts:
            c.update(terms(t))
        return c

    ca, cb = counts(a), counts(b)
    common = [t for t in ca if ca[t] >= min(2, len(a)) and cb.get(t, 0) >= min(2, len(b))
              and not all(w in names for w in t.split(" "))]
    common.sort(key=lambda t: (-stats.idf(t) * (ca[t] + cb[t]), t))
    top = common[:k]
    return _surface(top, [*a, *b])


def _surface(found: list[str], texts: list[str]) -> list[str]:
    out = []
    for term in found:
        words = term.split(" ")
        best = term
        for text in texts:
            toks = tokens(text)
            for i in range(len(toks) - len(words) + 1):
                if [t.lower() for t in toks[i:i + len(words)]] == words:
                    best = " ".join(toks[i:i + len(words)])
                    break
            else:
                continue
            break
        out.append(best)
    return out


def _central_text(graph: WorkingGraph, members: list[str], vec: np.ndarray) -> str:
    """The member event closest to the cluster's centroid, as a short summary."""
    stack = [(m, graph.event_vectors.get(m)) for m in members]
    vs = [(m, v) for m, v in stack if v is not None]
    if not vs:
        return graph.nodes[members[0]].text[:240]
    c = np.mean(np.stack([v for _, v in vs]), axis=0)
    best = max(vs, key=lambda mv: float(mv[1] @ c))[0]
    return graph.nodes[best].text[:240]


class _Builder:
    """Accumulates the operations of one plan, with refs for new nodes."""

    def __init__(self, event: Node, graph: WorkingGraph) -> None:
        self.event, self.graph = event, graph
        self.ops: list[Operation] = []
        self.claims: list[tuple[str, str | None]] = []
        self._n = 0
        self._edges: set[tuple[str, EdgeType, str]] = set()

    def add(self, kind: NodeKind, text: str, grounded: list[str], attrs: dict[str, Any],
            reasoning: str) -> str:
        self._n += 1
        ref = f"new{self._n}"
        self.ops.append(AddNode(ref=ref, kind=kind, text=text[:4000], attrs=attrs,
                                grounded_in=grounded, reasoning=reasoning))
        return ref

    def rename(self, ref: str, text: str) -> None:
        """Give the node this plan adds as ``ref`` another text."""
        self.ops = [op.model_copy(update={"text": text[:4000]})
                    if isinstance(op, AddNode) and op.ref == ref else op for op in self.ops]

    def edge(self, src: str, type_: EdgeType, dst: str, reasoning: str) -> None:
        if src == dst or (src, type_, dst) in self._edges:
            return
        self._edges.add((src, type_, dst))
        self.ops.append(AddEdge(src=src, dst=dst, type=type_, reasoning=reasoning))


def _find_person(graph: WorkingGraph, name: str) -> str | None:
    return PeopleIndex.of(graph).find(name)


def _planned(name: str, new: dict[str, str]) -> str | None:
    """The person one plan already adds that ``name`` refers to: the same name in any case
    ("callum thinks…" names the claim's holder "Callum"), else the only one
    :func:`same_person` accepts ("Gina" of "Gina Rossi"). The graph does not hold the
    plan's people yet, so the people index cannot find them."""
    found = new.get(name_key(name))
    if found is not None:
        return found
    fuzzy = {pid for key, pid in new.items() if same_person(key, name)}
    return fuzzy.pop() if len(fuzzy) == 1 else None


class _TimeIndex:
    """Time anchors by normalized value, kept in step with the graph by a node listener
    (rollbacks and renames included): finding a date is not a scan of every date so far.
    Of several anchors with one value, the one indexed last is found."""

    def __init__(self, graph: WorkingGraph) -> None:
        self.by_value: dict[str, dict[str, None]] = {}
        for t in graph.of_kind(NodeKind.TIME):
            self._on_node(t, None, graph.nodes[t])
        graph.node_listeners.append(self._on_node)

    @classmethod
    def of(cls, graph: WorkingGraph) -> _TimeIndex:
        return graph.indexes.of(_TimeIndex, lambda: cls(graph))

    def _on_node(self, node_id: str, before: Node | None, after: Node | None) -> None:
        old = before.text if before is not None and before.kind is NodeKind.TIME else None
        new = after.text if after is not None and after.kind is NodeKind.TIME else None
        if old == new:
            return
        if old is not None:
            ids = self.by_value.get(old, {})
            ids.pop(node_id, None)
            if not ids:
                self.by_value.pop(old, None)
        if new is not None:
            self.by_value.setdefault(new, {})[node_id] = None

    def find(self, value: str) -> str | None:
        ids = self.by_value.get(value)
        return next(reversed(ids)) if ids else None


def _find_time(graph: WorkingGraph, value: str) -> str | None:
    return _TimeIndex.of(graph).find(value)


def _kin_named(name: str, speaker: Any) -> str:
    """A kinship word used as a name is the speaker's relation: "Dad", said by Maya, is
    "Maya's dad", the person "my dad" and a view "Dad reckons ..." name (one person, not
    two)."""
    return (kin_holder(name, str(speaker)) if speaker else None) or name


def annotation_ops(b: _Builder, ann: Annotation) -> dict[str, str]:
    """Operations for the people, times, claims, obligations and causal links of an event.

    Returns a map from person name to its node id or ref (used for ABOUT edges).
    """
    g, ev = b.graph, b.event
    people: dict[str, str] = {}
    new: dict[str, str] = {}  # the people this plan adds, by name_key

    def person(name: str) -> str:
        if name in people:
            return people[name]
        key = name_key(name)
        pid = _find_person(g, name) or _planned(name, new)
        if pid is None:
            pid = b.add(NodeKind.PERSON, name, [ev.id], {"aliases": []},
                        "a person appears for the first time")
            new[key] = pid
        elif new.get(key) == pid and name != name.lower() \
                and all(p == p.lower() for p, q in people.items() if q == pid):
            b.rename(pid, name)  # "callum thinks…": the person this plan adds is Callum
        people[name] = pid
        return pid

    sender = read_source(ev.attrs.get("source"))
    speaker = sender.name
    if speaker is not None and sender.person:  # a person, not a channel, shop or group
        b.edge(person(speaker), EdgeType.PARTICIPATES, ev.id, "speaker of the event")
    meta = ev.attrs.get("meta") or {}
    for name in meta.get("participants", []) if isinstance(meta, dict) else []:
        if isinstance(name, str) and name.strip():
            b.edge(person(name.strip()), EdgeType.PARTICIPATES, ev.id, "present at the event")
    for pm in ann.people:
        if pm.role == "mentioned" and not (speaker and same_person(pm.name, speaker)):
            b.edge(ev.id, EdgeType.MENTIONS,
                   person(_kin_named(pm.name, speaker if sender.person else None)),
                   "named in the event")
    times: dict[str, str] = {}
    for tm in ann.times:
        tid = times.get(tm.value) or _find_time(g, tm.value)
        if tid is None:
            tid = b.add(NodeKind.TIME, tm.value, [ev.id], {
                "value": tm.value, "granularity": tm.granularity,
                "start": tm.start_ts.timestamp(), "end": tm.end_ts.timestamp(),
                "expressions": [tm.expression],
            }, f"time expression {tm.expression!r} resolved against the event time")
        times[tm.value] = tid
        b.edge(ev.id, EdgeType.MENTIONS, tid, f"mentions {tm.expression!r}")
    for c in ann.claims:
        holder = person(c.holder)
        claim_attrs: dict[str, Any] = {
            "holder": c.holder, "predicate": c.predicate, "stance": c.stance,
            "target": c.target, "target_key": target_key(c.target), "reported": c.reported,
            "valid_from": ev.ts, "superseded_by": None, "revises": _revises(ann, c),
            "states_facts": ann.states_facts,
        }
        if c.addressee is not None:
            claim_attrs["addressee"] = c.addressee
        if c.audience is not None:
            claim_attrs["audience"] = c.audience
        ref = b.add(NodeKind.CLAIM, c.content, [ev.id], claim_attrs,
                    f"{'reported' if c.reported else 'first-person'} {c.predicate} of {c.holder}")
        b.edge(holder, EdgeType.HOLDS, ref, "holder of the claim")
        b.edge(ref, EdgeType.SUPPORTED_BY, ev.id, "the utterance the claim rests on")
        named = next((p.name for p in ann.people if p.name.lower() in c.target.lower()), None)
        b.claims.append((ref, named))
    # (annotation already turned deadline-flagged times still ahead into obligations)
    for ob in ann.obligations:
        due = ob.due
        attrs: dict[str, Any] = {
            "category": "deadline" if due is not None else "follow_up",
            "status": "pending", "score": 1.0,
            "due": due.start_ts.timestamp() if due is not None else None,
            "history": [{"status": "pending", "at": ev.ts}],
            "source": "obligation",
            "clause": ob.text[:200],  # the words that stated it; the label is the goal
        }
        label = goal_of(ob, ev.text)
        iref = b.add(NodeKind.INTENT, label[:200], [ev.id], attrs,
                     "an explicit obligation in the event")
        b.edge(ev.id, EdgeType.TRIGGERS, iref, "the event states the obligation")
        if due is not None:
            tid = times.get(due.value)
            if tid is not None:
                b.edge(tid, EdgeType.DEADLINE_FOR, iref, f"due {due.expression!r}")
    if ann.causal and ev.attrs.get("seq"):
        cause = _likely_cause(g, ev)
        if cause is not None:
            b.edge(cause, EdgeType.CAUSES, ev.id, "explicit causal cue; most similar recent event")
    return people


def _likely_cause(graph: WorkingGraph, event: Node) -> str | None:
    """The recent earlier event most similar to a causal statement (cosine ≥ 0.3)."""
    vec = graph.event_vectors.get(event.id)
    if vec is None:
        return None
    st = graph.indexes.get(PlannerState)
    recent = [e for e in (st.recent if st is not None else []) if e != event.id]
    sims = graph.event_vectors.similarities(vec, recent)
    if not sims:
        return None
    best, cos = max(sims.items(), key=lambda x: x[1])
    return best if cos >= 0.3 else None
