"""The intent engine: admission of the planner's obligations, emergence of habits and
goals, resolution, expiry, reactivation and feedback, as one transaction per event."""

from __future__ import annotations

import math
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from enfold.errors import EnfoldError, InputError, NotFound
from enfold.graph import WorkingGraph
from enfold.intents.calibration import apply_weight, category_weights, feedback_score, threshold
from enfold.intents.core import (
    _DAYLIKE,
    CALIBRATION_KEY,
    DAY,
    LAPSE_DAYS,
    LATE_RESOLUTION_DAYS,
    OPEN,
    Labeler,
    _day,
    category_of,
    concepts_of,
    due_end,
    status_of,
)
from enfold.intents.groups import (
    Links,
    _close,
    _EvidenceDays,
    _GoalMemos,
    cached_links,
    densest_group,
    density,
    goal_template,
    habit_days,
    habit_label,
    symmetric,
)
from enfold.intents.resolution import (
    _names_as_limit,
    _stated,
    completes,
    content_words,
    cue_fragments,
    obligation_verb,
    past_forms,
)
from enfold.model import EdgeType, Node, NodeKind, OpRecord, now
from enfold.notify import (
    DEADLINE_NEAR,
    INTENT_EMERGED,
    INTENT_EXPIRED,
    INTENT_RESOLVED,
    REACTIVATED,
    Notification,
)
from enfold.plan import AddEdge, AddNode, MergeNodes, Operation, UpdateNode, UpdatePlan
from enfold.settings import Settings
from enfold.write.apply import ApplyResult, execute, label_similarity
from enfold.write.calibration import thresholds_for
from enfold.write.planner_local import PlannerState


# ------------------------------------------------------------------------------ engine
@dataclass
class IntentReport:
    """What the intent layer did for one event (or one feedback)."""

    emerged: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    suppressed: list[str] = field(default_factory=list)
    resolved: list[str] = field(default_factory=list)
    expired: list[str] = field(default_factory=list)
    linked: int = 0
    notifications: list[Notification] = field(default_factory=list)


@dataclass
class _State:
    """Derived, unpersisted per-graph state (rebuildable from the graph)."""

    clock: float = float("-inf")
    # Intents that can still change by themselves: open ones, and expired ones a late
    # completion may still resolve. Checked on use, so a stale entry is harmless.
    live: dict[str, None] = field(default_factory=dict)
    count: int = -1  # intents in the graph when ``live`` was last in step
    # intent id -> (the node object, until when it is live, is it a habit, has it a due):
    # nodes are immutable, so what is read from one holds until the intent is rewritten (a
    # new object).
    rules: dict[str, tuple[Node, float, bool, bool]] = field(default_factory=dict)
    late_days: float = LATE_RESOLUTION_DAYS  # the settings the rules were read under
    lapse_days: float = LAPSE_DAYS

    def read(self, node: Node) -> tuple[Node, float, bool, bool]:
        """``rules[node.id]``, read again when the intent was rewritten."""
        hit = self.rules.get(node.id)
        if hit is None or hit[0] is not node:
            hit = (node, _live_until(node, self.late_days, self.lapse_days),
                   category_of(node) == "habit",
                   node.attrs.get("due") is not None)
            self.rules[node.id] = hit
        return hit

    def is_live(self, node: Node, clock: float) -> bool:
        """:func:`_live` under the liveness windows this state was read with."""
        return _live(node, clock, late_days=self.late_days, lapse_days=self.lapse_days)


def _live_until(node: Node, late_days: float, lapse_days: float) -> float:
    """Until when (stream time) the intent is live: for ever while open and dated, never
    once settled; an expired one until its late-resolution window (``late_days``) closes,
    an undated open one (a habit, a goal) until it has rested ``lapse_days`` without new
    evidence."""
    status = status_of(node)
    if status == "expired":
        end = node.attrs.get("due_end")
        return float(end) + late_days * DAY if isinstance(end, (int, float)) \
            else -math.inf
    if status in OPEN and node.attrs.get("due") is None:
        # A habit or goal nobody has kept up rests: it stays open in the graph, but the
        # engine stops scanning it on every event until new evidence reinforces it.
        last = node.attrs.get("last_ts")
        return (float(last) if isinstance(last, (int, float)) else node.created_at) \
            + lapse_days * DAY
    return math.inf if status in OPEN else -math.inf


def _live(node: Node, clock: float, *, late_days: float = LATE_RESOLUTION_DAYS,
          lapse_days: float = LAPSE_DAYS) -> bool:
    """Whether the intent can still change by itself at stream time ``clock``: open, or
    expired but within the late-resolution window; an undated one rests after
    ``lapse_days``."""
    return _live_until(node, late_days, lapse_days) >= clock


class TriggerIndex:
    """The intents each concept TRIGGERS, by category, kept in step with the graph by an
    edge listener (rollbacks included): finding a concept's habit or goal costs what that
    concept has of them, not every deadline it ever raised."""

    def __init__(self, graph: WorkingGraph) -> None:
        self.graph = graph
        self.by_concept: dict[str, dict[str, dict[str, None]]] = {}
        for cid in graph.of_kind(NodeKind.CONCEPT):
            for _, e in graph.links(cid, (EdgeType.TRIGGERS,)):
                self._on_edge(e.key, e)
        graph.edge_listeners.append(self._on_edge)

    @classmethod
    def of(cls, graph: WorkingGraph) -> TriggerIndex:
        return graph.indexes.of(TriggerIndex, lambda: cls(graph))

    def _on_edge(self, key: tuple[str, EdgeType, str], edge: object) -> None:
        src, type_, dst = key
        if type_ is not EdgeType.TRIGGERS:
            return
        if edge is None:
            for ids in self.by_concept.get(src, {}).values():
                ids.pop(dst, None)
            return
        node = self.graph.nodes.get(dst)
        if node is not None and node.kind is NodeKind.INTENT \
                and src in self.graph.by_kind[NodeKind.CONCEPT]:
            self.by_concept.setdefault(src, {}).setdefault(category_of(node), {})[dst] = None

    def intents(self, concept_id: str, category: str) -> Iterable[str]:
        return self.by_concept.get(concept_id, {}).get(category, {}).keys()


class IntentEngine:
    """The intent layer of one memory; its per-namespace state lives in ``graph.indexes``."""

    def __init__(self, settings: Settings | None = None, *, embedder_name: str | None = None,
                 labeler: Labeler | None = None) -> None:
        self.s = settings or Settings()
        cal = thresholds_for(embedder_name, self.s)
        self.related_threshold = cal["parent"]  # "same broader theme"
        self.cluster_threshold = cal["cluster"]  # "would cluster into one concept"
        self.assign_threshold = cal["assign"]  # "belongs to this concept"
        self.labeler = labeler

    # ------------------------------------------------------------------------ state
    def state(self, graph: WorkingGraph, *, new: int = 0) -> _State:
        """The graph's intent state; rebuilt when intents changed behind the engine's back
        (``new``: intents the caller knows were just added and is about to admit)."""
        late, lapse = self.s.late_resolution_days, self.s.intent_lapse_days
        st = graph.indexes.of(_State, lambda: _State(clock=max(
            (graph.nodes[e].ts for e in graph.of_kind(NodeKind.EVENT)), default=float("-inf")),
            late_days=late, lapse_days=lapse))
        if (st.late_days, st.lapse_days) != (late, lapse):  # read under other settings
            st = graph.indexes.put(_State(clock=st.clock, late_days=late, lapse_days=lapse))
        if st.count + new != graph.count(NodeKind.INTENT):
            st.live = {i: None for i in graph.of_kind(NodeKind.INTENT)
                       if st.is_live(graph.nodes[i], st.clock)}
            st.count = graph.count(NodeKind.INTENT)
        return st

    def weight(self, graph: WorkingGraph, category: str) -> float:
        return category_weights(graph).get(category, 1.0)

    def threshold(self, graph: WorkingGraph, category: str) -> float:
        """The evidence score an intent of ``category`` needs to emerge (1.0 at w = 1)."""
        return threshold(self.weight(graph, category), lo=self.s.intent_threshold_min,
                         hi=self.s.intent_threshold_max)

    # ------------------------------------------------------------------- per event
    def on_event(self, event: Node, graph: WorkingGraph, result: ApplyResult | None = None,
                 *, at: float | None = None) -> IntentReport:
        """Run the intent layer for a just-folded event, inside the open transaction."""
        created = list(result.created.values()) if result is not None else []
        new_intents = [i for i in created if i in graph.by_kind[NodeKind.INTENT]]
        st = self.state(graph, new=len(new_intents))
        clock = max(st.clock, event.ts)
        tx = _Tx(self, graph, st, event, clock, now() if at is None else at)
        concepts = concepts_of(graph, event.id)
        for iid in new_intents:
            if iid in graph.nodes:
                tx.admit(iid, concepts)
        for cid in created:
            if cid in graph.by_kind[NodeKind.CONCEPT]:
                tx.link_new_concept(cid)
        tx.deadline_references(concepts)
        tx.resolutions()
        for cid in concepts:
            tx.habit(cid)
        if concepts:
            tx.goals(concepts)
        for cid in concepts:
            if cid not in created:
                tx.reactivation(cid)
        tx.tick()
        st.clock = clock
        st.count = graph.count(NodeKind.INTENT)
        return tx.report

    def tick(self, graph: WorkingGraph, clock: float, *, at: float | None = None
             ) -> IntentReport:
        """Expire overdue intents and announce near deadlines at stream time ``clock``."""
        st = self.state(graph)
        st.clock = max(st.clock, clock)
        tx = _Tx(self, graph, st, None, st.clock, now() if at is None else at)
        tx.tick()
        st.count = graph.count(NodeKind.INTENT)
        return tx.report

    # --------------------------------------------------------------------- feedback
    def feedback(self, graph: WorkingGraph, intent_id: str, kind: str, *,
                 label: str | None = None, at: float | None = None) -> Node:
        """Apply user feedback to an intent, inside the open transaction; returns the intent.

        Updates the category's weight (Eq. 2) and the intent: accept → confirmed (stays
        pending), modify → confirmed with the new ``label``, defer → deferred, reject →
        rejected. The op log gets the status change and a ``FEEDBACK`` record with the weight
        before and after; no event is invented.
        """
        score = feedback_score(self.s, kind)
        node = graph.get(intent_id)
        if node is None or node.kind is not NodeKind.INTENT:
            raise NotFound(f"no intent {intent_id!r} in namespace {graph.namespace!r}")
        if label is not None and (not label.strip() or len(label) > self.s.max_node_text):
            raise InputError("a modified label must be non-empty text")
        if label is not None and kind != "modify":
            raise InputError("only 'modify' feedback changes the label")
        if kind == "modify" and label is None:
            raise InputError("'modify' feedback needs the corrected label")
        st = self.state(graph)
        wall = now() if at is None else at
        category = category_of(node)
        weights = category_weights(graph)
        before = weights.get(category, 1.0)
        after = apply_weight(before, score, self.s.intent_ema_alpha)
        graph.set_meta(CALIBRATION_KEY, {**weights, category: round(after, 6)})
        status = {"accept": "pending", "modify": "pending", "defer": "deferred",
                  "reject": "rejected"}[kind]
        tx = _Tx(self, graph, st, None, st.clock if math.isfinite(st.clock) else node.ts, wall,
                 plan_prefix="fb")
        attrs: dict[str, Any] = {"feedback": kind}
        if kind in ("accept", "modify"):
            attrs["confirmed"] = True
        if status != status_of(node):
            tx.set_status(node.id, status, f"user feedback: {kind}", by="feedback",
                          extra=attrs, text=label)
        else:
            tx.apply([UpdateNode(id=node.id, text=label, attrs=attrs,
                                 reasoning=f"user feedback: {kind}")], f"feedback {kind}")
        graph.add_op(OpRecord(graph.namespace, 0, tx.plan_id, "FEEDBACK", node.id,
                              {"category": category, "weight": before},
                              {"kind": kind, "score": score, "weight": after},
                              f"user feedback {kind}: w[{category}] {before:.3f} → "
                              f"{after:.3f}", wall))
        return graph.nodes[node.id]


class _Tx:
    """One pass of the intent layer over one event, in the open transaction."""

    def __init__(self, engine: IntentEngine, graph: WorkingGraph, st: _State,
                 event: Node | None, clock: float, at: float, plan_prefix: str = "it") -> None:
        self.e, self.g, self.st = engine, graph, st
        # Feedback and ticks have no event: a placeholder keeps the per-event code simple.
        self.event = event or Node("", graph.namespace, NodeKind.EVENT, "", {"ts": clock})
        self.s = engine.s
        self.clock, self.at = clock, at
        self.plan_id = f"{plan_prefix}_{uuid.uuid4().hex[:20]}"
        self.report = IntentReport()
        self._n = 0

    # ------------------------------------------------------------------ plumbing
    def apply(self, ops: list[Operation], reasoning: str) -> ApplyResult:
        self._n += 1
        plan = UpdatePlan(plan_id=f"{self.plan_id}.{self._n}", event_id=self.event.id or None,
                          namespace=self.g.namespace, planner="intents", reasoning=reasoning,
                          operations=ops)
        return execute(plan, self.g, self.s, at=self.at)

    def notify(self, type_: str, node_id: str, **detail: Any) -> None:
        node = self.g.nodes[node_id]
        due = node.attrs.get("due") if node.kind is NodeKind.INTENT else None
        self.report.notifications.append(Notification(
            type_, self.g.namespace, node_id, node.text, self.clock,
            category_of(node) if node.kind is NodeKind.INTENT else None,
            float(due) if isinstance(due, (int, float)) else None,
            self.event.id or None, detail))

    def history(self, node: Node | None, status: str, reason: str, by: str) -> list[Any]:
        """``node``'s history with a new status entry (None: a fresh history)."""
        hist = list(node.attrs.get("history") or []) if node is not None else []
        entry: dict[str, Any] = {"status": status, "at": self.clock, "by": by,
                                 "reason": reason}
        if self.event.id and self.event.kind is NodeKind.EVENT:
            entry["event"] = self.event.id
        if by == "feedback":
            entry["wall"] = self.at
        hist.append(entry)
        cap = self.s.intent_history_max
        return hist[:1] + hist[-(cap - 1):] if len(hist) > cap else hist

    def set_status(self, iid: str, status: str, reason: str, *, by: str = "rule",
                   extra: dict[str, Any] | None = None, text: str | None = None) -> None:
        node = self.g.nodes[iid]
        attrs = {**(extra or {}), "status": status,
                 "history": self.history(node, status, reason, by)}
        self.apply([UpdateNode(id=iid, text=text, attrs=attrs,
                               reasoning=f"intent {status}: {reason}")], f"intent {status}")
        if self.st.is_live(self.g.nodes[iid], self.clock):
            self.st.live[iid] = None
        else:
            self.st.live.pop(iid, None)

    def live(self, *, dated: bool = False, habits: bool = True) -> list[Node]:
        """The live intents (open, or expired but still resolvable), pruning the rest;
        ``dated``: only those with a due time; ``habits=False``: no habits."""
        out = []
        nodes, read, clock = self.g.nodes, self.st.read, self.clock
        gone = []
        for iid in self.st.live:
            node = nodes.get(iid)
            if node is None:
                gone.append(iid)
                continue
            _, until, habit, has_due = read(node)
            if until < clock:
                gone.append(iid)
            elif (has_due or not dated) and (habits or not habit):
                out.append(node)
        for iid in gone:
            self.st.live.pop(iid, None)
            self.st.rules.pop(iid, None)
        return out

    def emerges(self, category: str, score: float) -> bool:
        return score >= self.e.threshold(self.g, category) - 1e-9

    def label(self, category: str, template: str, evidence: Sequence[str]) -> str:
        if self.e.labeler is not None:
            try:
                text = self.e.labeler(category, evidence, self.g.namespace).strip()
                if text:
                    return text[:200]
            except EnfoldError:
                pass  # the template is the fallback
        return template

    def texts(self, node: Node, limit: int = 5) -> list[str]:
        return [self.g.nodes[e].text for e in node.grounded_in[:limit] if e in self.g.nodes]

    def reinforce(self, iid: str, events: Sequence[str], concepts: Sequence[str], reason: str,
                  *, score: float | None = None, fresh: Sequence[str] | None = None) -> None:
        """More evidence for an existing intent: score up, grounding and TRIGGERS extended;
        a suppressed intent that now clears its threshold emerges. ``fresh``: the events new
        to the intent, when a merge has already added them to its grounding."""
        node = self.g.nodes[iid]
        events = [e for e in dict.fromkeys(events) if e in self.g.by_kind[NodeKind.EVENT]]
        have = self.g.grounded(iid)
        new = [e for e in events if e not in have]
        fresh = new if fresh is None else list(fresh)
        old = float(node.attrs.get("score") or 0.0)
        new_score = min(self.s.intent_max_score, max(old + (self.s.strength_reinforce if fresh else 0.0),
                                       score or 0.0))
        last = max([float(node.attrs.get("last_ts") or 0.0),
                    *(self.g.nodes[e].ts for e in fresh if e in self.g.nodes)])
        ops: list[Operation] = []
        if new or new_score != old:
            ops.append(UpdateNode(
                id=iid, grounded_in=new, reasoning=reason,
                attrs={"score": round(new_score, 6), "last_ts": last,
                       "reinforced": int(node.attrs.get("reinforced") or 0) + 1}))
        ops += [AddEdge(src=e, dst=iid, type=EdgeType.GROUNDS, reasoning=reason) for e in new
                if not any(x.dst == iid for x in self.g.out_edges(e))]
        linked = [c for c in dict.fromkeys(concepts)
                  if c in self.g.by_kind[NodeKind.CONCEPT]
                  and self.g.edge(c, EdgeType.TRIGGERS, iid) is None]
        ops += [AddEdge(src=c, dst=iid, type=EdgeType.TRIGGERS, reasoning=reason)
                for c in linked]
        if not ops:
            return
        self.apply(ops, reason)
        self.report.linked += len(linked)
        self.report.reinforced.append(iid)
        node = self.g.nodes[iid]
        if self.st.is_live(node, self.clock):  # a resting habit or goal is back in play
            self.st.live[iid] = None
        if status_of(node) == "suppressed" and self.emerges(category_of(node), new_score):
            self.set_status(iid, "pending", "reinforced past its category's threshold")
            self.emerged(iid)

    def emerged(self, iid: str) -> None:
        self.report.emerged.append(iid)
        self.notify(INTENT_EMERGED, iid)

    def link(self, iid: str, concepts: Iterable[str], reason: str) -> None:
        ops: list[Operation] = [
            AddEdge(src=c, dst=iid, type=EdgeType.TRIGGERS, reasoning=reason)
            for c in dict.fromkeys(concepts)
            if c in self.g.by_kind[NodeKind.CONCEPT]
            and self.g.edge(c, EdgeType.TRIGGERS, iid) is None]
        if ops:
            self.apply(ops, reason)
            self.report.linked += len(ops)

    # --------------------------------------------------------- explicit obligations
    def centroid(self, event_ids: Iterable[str]) -> np.ndarray | None:
        return self.g.event_centroid(event_ids)

    def supporting(self, node: Node, concepts: Sequence[str]) -> list[str]:
        """The concepts of the intent's events, plus its nearest concept if close enough."""
        out = list(concepts)
        for e in node.grounded_in:
            out += concepts_of(self.g, e)
        c = self.centroid(node.grounded_in)
        if c is not None and len(self.g.node_vectors):
            for cid, cos in self.g.nearest(c, NodeKind.CONCEPT, 1):
                if cos >= self.e.cluster_threshold:
                    out.append(cid)
        return list(dict.fromkeys(out))

    def key_terms(self, text: str) -> set[str]:
        """Distinctive unigrams of a text (no completion verbs, no stream-wide words)."""
        found = set(content_words(text))
        planner = self.g.indexes.get(PlannerState)
        stats = planner.terms if planner is not None else None
        docs = stats.docs if stats is not None else 0
        if stats is not None and docs >= 20:
            found = {t for t in found if stats.df.get(t, 0) <= self.e.s.common_term_share * docs}
        return found

    def duplicate_of(self, node: Node, category: str, support: Sequence[str]) -> str | None:
        """An open intent for the same need as ``node`` (None: it is new).

        Same need: a near-identical label; or the same action on a shared object ("renew
        my passport" / "remind me to renew the passport"); or mostly the same key terms; or
        a shared supporting concept with two shared key terms — and, when both are dated,
        the same due day (a dated one also matches on the day plus one shared term or
        concept). Explicit deadlines and follow-ups are compared across the two categories.
        """
        explicit = {"deadline", "follow_up"}
        cats = explicit if category in explicit else {category}
        due = node.attrs.get("due")
        mine = self.key_terms(node.text)
        verb = obligation_verb(_stated(node))
        for other in self.live(habits="habit" in cats):
            iid = other.id
            if iid == node.id or category_of(other) not in cats or status_of(other) not in OPEN:
                continue
            names = [other.text, *other.attrs.get("aliases", [])]
            thr = self.s.merge_threshold
            if max(label_similarity(node.text, n, thr) for n in names) >= thr:
                return iid
            odue = other.attrs.get("due")
            both_dated = due is not None and odue is not None
            if both_dated and abs(float(due or 0.0) - float(odue or 0.0)) >= DAY:
                continue
            theirs = self.key_terms(other.text)
            shared = mine & theirs
            theirs_c = {e.src for e in self.g.in_edges(iid) if e.type is EdgeType.TRIGGERS}
            shared_concept = bool(theirs_c & set(support))
            same_action = verb is not None and verb == obligation_verb(_stated(other)) \
                and bool(shared - {verb})
            overlap = len(shared) / max(1, len(mine | theirs))
            if (same_action or overlap >= 0.5 or (shared_concept and len(shared) >= 2)
                    or (both_dated and (shared_concept or shared))):
                return iid
        return None

    def admit(self, iid: str, concepts: Sequence[str]) -> None:
        """A planner-written intent: link, deduplicate, then gate by calibration."""
        node = self.g.nodes[iid]
        category = category_of(node)
        support = self.supporting(node, concepts)
        dup = self.duplicate_of(node, category, support)
        if dup is not None:
            kept = self.g.nodes[dup]
            fresh = [e for e in node.grounded_in if e not in kept.grounded_in]
            self.apply([MergeNodes(keep=dup, absorb=iid,
                                   reasoning="the same need as an open intent")],
                       "duplicate intent merged")
            self.st.live.pop(iid, None)
            if node.attrs.get("due") is not None and kept.attrs.get("due") is None:
                # "renew the passport" is now "renew the passport by June": it has a due.
                merged = self.g.nodes[dup]
                self.apply([UpdateNode(id=dup, reasoning="the need now has a due time", attrs={
                    "category": "deadline", "due": node.attrs["due"],
                    "due_end": due_end(self.g, merged)})], "intent gained a due time")
            if node.attrs.get("source") == "llm" and kept.attrs.get("source") != "llm":
                # The model's label says it better than a verbatim obligation clause.
                aliases = [a for a in self.g.nodes[dup].attrs.get("aliases", [])
                           if a != node.text]
                self.apply([UpdateNode(id=dup, text=node.text, reasoning="the LLM's label",
                                       attrs={"aliases": [kept.text, *aliases]})],
                           "intent relabelled")
            self.reinforce(dup, node.grounded_in, support,
                           "the same need stated again: reinforced, not duplicated",
                           fresh=fresh)
            return
        score = {"deadline": self.s.intent_explicit_deadline,
                 "follow_up": self.s.intent_explicit_follow_up}.get(
                     category, self.s.intent_explicit_other)
        end = due_end(self.g, node)
        if end is not None and end <= self.clock:
            status, reason = "expired", "due before it was stated"
        elif self.emerges(category, score):
            status, reason = "pending", "explicit obligation"
        else:
            status, reason = "suppressed", (f"below the {category} threshold "
                                            f"{self.e.threshold(self.g, category):.2f}")
        attrs: dict[str, Any] = {
            "category": category, "status": status, "score": score,
            "last_ts": max((self.g.nodes[e].ts for e in node.grounded_in if e in self.g.nodes),
                           default=self.clock),
            "history": self.history(None, status, reason, "rule"),
            "source": node.attrs.get("source") or "planner",
        }
        if end is not None:
            attrs["due_end"] = end
        self.apply([UpdateNode(id=iid, attrs=attrs, reasoning=f"intent admitted: {reason}")],
                   "intent admitted")
        self.link(iid, support, "supporting concept of the intent")
        self.st.live[iid] = None
        if status == "pending":
            self.emerged(iid)
        elif status == "suppressed":
            self.report.suppressed.append(iid)

    def link_new_concept(self, cid: str) -> None:
        """A concept just formed from events that ground intents: TRIGGERS into them."""
        concept = self.g.nodes[cid]
        for ev in concept.grounded_in:
            for e in list(self.g.out_edges(ev)):
                target = self.g.nodes.get(e.dst)
                if (e.type in (EdgeType.TRIGGERS, EdgeType.GROUNDS) and target is not None
                        and target.kind is NodeKind.INTENT and status_of(target) != "expired"):
                    self.link(target.id, [cid], "the concept its evidence belongs to")

    def deadline_references(self, concepts: Sequence[str]) -> None:
        """An event naming an open intent's due day, and related to it, grounds it."""
        ev = self.event
        days = [t for e in self.g.out_edges(ev.id) if e.type is EdgeType.MENTIONS
                and (t := self.g.nodes.get(e.dst)) is not None and t.kind is NodeKind.TIME
                and t.attrs.get("granularity") in _DAYLIKE
                and isinstance(t.attrs.get("start"), (int, float))]
        if not days:
            return
        vec = self.g.event_vectors.get(ev.id)
        for node in self.live(dated=True):
            iid = node.id
            if status_of(node) not in OPEN or ev.id in node.grounded_in:
                continue
            due = float(node.attrs.get("due") or 0.0)
            if not any(float(t.attrs["start"]) <= due < float(t.attrs.get("end") or due + 1)
                       for t in days):
                continue
            sims = self.g.event_vectors.similarities(vec, node.grounded_in) \
                if vec is not None else {}
            related = (max(sims.values(), default=0.0) >= self.e.related_threshold
                       or any(_names_as_limit(ev.text, t) for t in days)
                       or bool(self.key_terms(ev.text) & self.key_terms(" ".join(
                           [node.text, *self.texts(node)]))))
            if related:
                self.reinforce(iid, [ev.id], concepts, "the event refers to the intent's "
                               "due day")

    # ------------------------------------------------------------------ resolution
    def resolutions(self) -> None:
        """Close the open intent a completion report is about ("Submitted the NSF proposal")."""
        ev = self.event
        cues = cue_fragments(ev.text)
        words = {w.lower() for w in re.findall(r"[A-Za-z]+", ev.text)}
        candidates = []
        for node in self.live(habits=False):  # a habit is kept up, never "done"
            if ev.id in self.g.grounded(node.id):
                continue
            verb = obligation_verb(_stated(node)) if node.attrs.get("source") == "obligation" \
                else None
            if cues or (verb is not None and past_forms(verb) & words):
                candidates.append((node, verb))
        if not candidates:
            return
        looks_ahead = [t for e in self.g.out_edges(ev.id) if e.type is EdgeType.MENTIONS
                       and (t := self.g.nodes.get(e.dst)) is not None
                       and t.kind is NodeKind.TIME
                       and float(t.attrs.get("end") or 0.0) > ev.ts]
        vec = self.g.event_vectors.get(ev.id)
        best: dict[str, tuple[float, str]] = {}  # fragment -> (score, intent)
        for node, verb in candidates:
            due = node.attrs.get("due")
            if due is not None and any(float(t.attrs.get("start") or 0.0) <= float(due)
                                       < float(t.attrs.get("end") or 0.0) for t in looks_ahead):
                continue  # the event looks forward to this very deadline: not done yet
            frags = list(cues)
            if verb is not None and (frag := completes(verb, ev.text)) is not None:
                frags.append(frag)
            if not frags:
                continue
            theirs = self.key_terms(" ".join([node.text, *self.texts(node)]))
            sims = self.g.event_vectors.similarities(vec, node.grounded_in) \
                if vec is not None else {}
            cos = max(sims.values(), default=0.0)
            for frag in frags:
                mine = self.key_terms(frag)
                shared = len(mine & theirs)
                if (shared >= 2 or (shared >= 1 and cos >= self.e.cluster_threshold)
                        or (not mine and cos >= self.e.assign_threshold)):
                    score = shared + cos
                    if score > best.get(frag, (-1.0, ""))[0]:
                        best[frag] = (score, node.id)
        for _score, iid in sorted(best.values(), reverse=True):
            if status_of(self.g.nodes[iid]) == "resolved":
                continue
            self.set_status(iid, "resolved", f"completion reported: {ev.text[:120]!r}",
                            extra={"resolved_by": ev.id})
            self.reinforce(iid, [ev.id], [], "the event reports it done")
            self.report.resolved.append(iid)
            self.notify(INTENT_RESOLVED, iid)

    # ---------------------------------------------------------------------- habits
    def existing(self, concepts: Iterable[str], category: str) -> list[str]:
        """Intents of ``category`` (any status but expired) triggered by these concepts."""
        out: dict[str, None] = {}
        index = TriggerIndex.of(self.g)
        for cid in concepts:
            for iid in index.intents(cid, category):  # kept in step with the edges
                n = self.g.nodes.get(iid)
                if n is not None and status_of(n) != "expired":
                    out[iid] = None
        return list(out)

    def habit(self, cid: str) -> None:
        concept = self.g.nodes[cid]
        if concept.attrs.get("level"):
            return  # a parent theme spans several activities: not one habit
        days = habit_days(self.g, cid, self.event.ts, self.s.habit_window_days,
                          self.event.attrs.get("source"), recent=self.s.intent_recent_events)
        score = len(days) / max(1, self.s.habit_min_events)
        found = self.existing([cid], "habit")
        for extra in found[1:]:  # concepts merged by consolidation: one habit each
            self.apply([MergeNodes(keep=found[0], absorb=extra,
                                   reasoning="two habits of one concept")], "habits merged")
        if found:
            self.reinforce(found[0], days, [cid], "the habit occurred again", score=score)
            node = self.g.nodes[found[0]]
            if node.text.startswith("Keep up: "):
                # A habit named after its concept is renamed when its occurrences or the
                # concept's new name say the activity ("Keep up: Marathon effort" -> "Keep
                # running"); a label that names one is kept.
                label = habit_label(concept, [self.g.nodes[d].text for d in days])
                if label != node.text:
                    self.apply([UpdateNode(id=found[0], text=label,
                                           reasoning="the habit's activity read again")],
                               "habit renamed")
            return
        if not self.emerges("habit", score):
            return
        label = habit_label(concept, [self.g.nodes[d].text for d in days])
        ops: list[Operation] = [AddNode(
            ref="habit", kind=NodeKind.INTENT, text=label, grounded_in=days,
            reasoning=(f"{len(days)} occurrences on distinct days within "
                       f"{self.s.habit_window_days:g} days"),
            attrs={"category": "habit", "status": "pending", "score": round(score, 6),
                   "due": None, "source": "habit", "concept": cid,
                   "last_ts": self.g.nodes[days[-1]].ts,
                   "history": self.history(None, "pending", "recurring pattern", "rule")})]
        ops.append(AddEdge(src=cid, dst="habit", type=EdgeType.TRIGGERS,
                           reasoning="the recurring concept"))
        ops += [AddEdge(src=e, dst="habit", type=EdgeType.GROUNDS,
                        reasoning="an occurrence of the habit") for e in days]
        iid = self.apply(ops, "habit emerged").created["habit"]
        self.st.live[iid] = None
        self.report.linked += 1
        self.emerged(iid)

    # ----------------------------------------------------------------------- goals
    def goals(self, seeds: Sequence[str]) -> None:
        g = self.g
        active_from = self.clock - self.e.s.goal_active_days * DAY

        def active(cid: str) -> bool:
            n = g.nodes.get(cid)
            return n is not None and float(n.attrs.get("last_ts") or n.created_at) >= active_from

        links: Links = {}
        queue = [c for c in seeds if active(c)]
        seen = set(queue)
        while queue and len(links) < self.e.s.goal_scan:
            cid = queue.pop(0)
            links[cid] = cached_links(g, cid, self.s.intent_recent_events)
            for other in links[cid]:
                if other not in seen and active(other):
                    seen.add(other)
                    queue.append(other)
        if len(links) < 3:
            return
        # The same concepts, linked to the same others with weights within goal_slack of
        # those the last peeling saw: its densest group stands (a concept's overlap ratios
        # move a little with every event it gains, and peeling again for that is waste).
        memos = g.indexes.of(_GoalMemos, _GoalMemos)
        rows = list(links.items())
        key = tuple(links)
        links = symmetric(links)
        memo = memos.get(key)
        if memo is not None and _close(memo[0], rows, self.e.s.goal_slack):
            # The group stands; its density is read again from today's weights, so whether
            # a goal emerges is never decided on a stale number.
            group = memo[1]
            dens = density(group, links)
        else:
            group, dens = densest_group(links)
            if len(memos) >= self.e.s.goal_memos:
                memos.clear()
            memos[key] = (rows, group)
        if not group:
            return
        score = dens / max(1e-9, self.s.intent_density)
        found = self.existing(group, "goal")
        for iid in found:  # two concepts in common: the same convergence, grown or shifted
            members = set(g.nodes[iid].attrs.get("concepts") or [])
            if len(members & set(group)) >= 2:
                if not set(group) <= members:
                    self.apply([UpdateNode(id=iid,
                                           attrs={"concepts": sorted(members | set(group))},
                                           reasoning="the goal's concept group grew")],
                               "goal group")
                # A goal's evidence is one event per day of activity, as a habit's is: its
                # concepts hold every event, and a goal reinforced by each of thousands of
                # events would carry thousands of GROUNDS edges that say nothing more. A
                # day that has its evidence still links new concepts and raises the score.
                today = _day(self.event.ts) in self.evidence_days(iid)
                self.reinforce(iid, [] if today else [self.event.id], group,
                               "activity in the goal's concepts", score=score)
                return
        if not self.emerges("goal", score):
            return
        evidence = [self.event.id]
        for c in group:
            evidence += g.nodes[c].grounded_in[-1:]
        evidence = list(dict.fromkeys(e for e in evidence if e in g.by_kind[NodeKind.EVENT]))
        template = goal_template(g, group, links)
        label = self.label("goal", template, [g.nodes[e].text for e in evidence])
        ops: list[Operation] = [AddNode(
            ref="goal", kind=NodeKind.INTENT, text=label, grounded_in=evidence,
            reasoning=(f"{len(group)} converging concepts, weighted density {dens:.2f} ≥ "
                       f"{self.e.threshold(g, 'goal') * self.s.intent_density:.2f}"),
            attrs={"category": "goal", "status": "pending", "score": round(score, 6),
                   "due": None, "source": "density", "concepts": sorted(group),
                   "density": round(dens, 6), "last_ts": self.event.ts,
                   "history": self.history(None, "pending", "converging concepts",
                                           "rule")})]
        ops += [AddEdge(src=c, dst="goal", type=EdgeType.TRIGGERS,
                        reasoning="a concept of the converging group") for c in group]
        ops.append(AddEdge(src=self.event.id, dst="goal", type=EdgeType.GROUNDS,
                           reasoning="the event that completed the group"))
        iid = self.apply(ops, "goal emerged").created["goal"]
        self.st.live[iid] = None
        self.report.linked += len(group)
        self.emerged(iid)

    def evidence_days(self, iid: str) -> frozenset[int]:
        """The (UTC) days of the intent's evidence events; read once per node object (a
        goal's provenance grows by at most one event a day)."""
        node = self.g.nodes[iid]
        cache = self.g.indexes.of(_EvidenceDays, _EvidenceDays)
        hit = cache.get(iid)
        if hit is None or hit[0] is not node:
            days = frozenset(_day(n.ts) for e in node.grounded_in
                             if (n := self.g.nodes.get(e)) is not None)
            hit = cache[iid] = (node, days)
        return hit[1]

    # ---------------------------------------------------------------- reactivation
    def reactivation(self, cid: str) -> None:
        """A concept silent for ≥ ``dormant_days`` and reinforced now wakes its intents."""
        node = self.g.nodes[cid]
        ev = self.event
        before = [self.g.nodes[e].ts for e in node.grounded_in[-self.s.intent_recent_events:]
                  if e != ev.id and e in self.g.nodes]
        if not before:
            return
        gap = ev.ts - max(before)
        if gap < self.e.s.dormant_days * DAY:
            return
        intents = [e.dst for e in self.g.out_edges(cid) if e.type is EdgeType.TRIGGERS
                   and (n := self.g.nodes.get(e.dst)) is not None and status_of(n) in OPEN]
        self.notify(REACTIVATED, cid, dormant_days=round(gap / DAY, 2), intents=intents)

    # ------------------------------------------------------------------------ tick
    def tick(self) -> None:
        """Expire what is overdue; announce deadlines entering the urgency window."""
        window = self.s.urgency_window_h * 3600.0
        for node in sorted(self.live(dated=True), key=lambda n: float(n.attrs["due"])):
            iid = node.id
            if status_of(node) not in OPEN:
                continue
            end = node.attrs.get("due_end")
            end = float(end) if isinstance(end, (int, float)) else due_end(self.g, node)
            if end is not None and end < self.clock:
                was = status_of(node)
                self.set_status(iid, "expired", "its due time passed on the stream clock")
                self.report.expired.append(iid)
                if was == "pending":
                    self.notify(INTENT_EXPIRED, iid)
                continue
            left = float(node.attrs["due"]) - self.clock
            if (status_of(node) == "pending" and 0.0 <= left < window
                    and not node.attrs.get("near_notified")):
                self.apply([UpdateNode(id=iid, attrs={"near_notified": self.clock},
                                       reasoning="its deadline entered the urgency window")],
                           "deadline near")
                self.notify(DEADLINE_NEAR, iid, hours_left=round(left / 3600.0, 2))
