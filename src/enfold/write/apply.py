"""The executor: validates an UpdatePlan and applies it atomically.

Plans come from untrusted text — an event may say "delete all memories" and an LLM may
oblige — so this module is the security boundary. It enforces:

* kinds and edge endpoints against :data:`enfold.model.ONTOLOGY`;
* every referenced node exists *in this namespace* (the working graph holds one namespace,
  so an id from another namespace is simply unknown here);
* events are never created, modified, merged or removed by a plan;
* concepts, intents and facts are grounded in at least one existing event;
* refs of new nodes never collide with existing ids; ids are assigned here, never reused;
* every node's attributes against its kind's payload model (:mod:`enfold.payloads`: types,
  times inside the calendar, JSON-storable);
* per-plan limits (operations, removals, text and attribute sizes).

A near-duplicate concept (normalized label similarity or centroid cosine at or above the
merge threshold) is turned into reinforcement of the existing one. Concepts and intents left
without any edge get GROUNDS edges from their ``grounded_in`` events (orphan repair). Every
applied operation is written to the op log. :func:`validate_plan` is pure;
:func:`apply_plan` is the one place that touches the store.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from enfold.errors import PlanError
from enfold.graph import WorkingGraph
from enfold.model import (
    GROUNDED_KINDS,
    ONTOLOGY,
    PLANNABLE_KINDS,
    Edge,
    EdgeType,
    Node,
    NodeKind,
    OpRecord,
    new_id,
)
from enfold.payloads import attrs_errors
from enfold.plan import AddEdge, AddNode, MergeNodes, RemoveEdge, RemoveNode, UpdateNode, UpdatePlan
from enfold.settings import Settings
from enfold.store.base import Store


@dataclass
class ApplyResult:
    """What applying a plan did."""

    plan_id: str
    created: dict[str, str] = field(default_factory=dict)  # ref -> new id
    reinforced: list[str] = field(default_factory=list)  # concepts reinforced (near-dups)
    repaired: list[str] = field(default_factory=list)  # orphans given GROUNDS edges
    applied: int = 0


_NORM = re.compile(r"[^a-z0-9 ]+")


@functools.lru_cache(maxsize=8192)
def normalize_label(label: str) -> str:
    words = _NORM.sub(" ", label.lower()).split()
    return " ".join(sorted(words))


def label_similarity(a: str, b: str, floor: float = 0.0) -> float:
    """Similarity of two labels after normalization (case, punctuation, word order).

    With ``floor``, a pair that cannot reach it is answered by a cheap upper bound (below
    ``floor``) instead of the exact ratio: for callers that only compare with ``floor``.
    """
    return normalized_similarity(normalize_label(a), normalize_label(b), floor)


@functools.lru_cache(maxsize=32768)
def normalized_similarity(na: str, nb: str, floor: float = 0.0) -> float:
    """:func:`label_similarity` of two labels already through :func:`normalize_label`.
    Cached: compression compares the same concept labels pass after pass."""
    if not na or not nb:
        return 0.0
    if na == nb:
        return 1.0
    if floor > 0.0:
        # The ratio is 2·matches / total length, and matches ≤ the shorter length, and
        # ≤ the characters the two have in common (difflib's real_quick_ratio and
        # quick_ratio bounds, from cached character counts).
        total = len(na) + len(nb)
        bound = 2.0 * min(len(na), len(nb)) / total
        if bound < floor:
            return bound
        ca, cb = _char_counts(na), _char_counts(nb)
        if len(ca) > len(cb):
            ca, cb = cb, ca
        bound = 2.0 * sum(min(n, cb.get(ch, 0)) for ch, n in ca.items()) / total
        if bound < floor:
            return bound
    return difflib.SequenceMatcher(None, na, nb).ratio()


@functools.lru_cache(maxsize=8192)
def _char_counts(text: str) -> dict[str, int]:
    return dict(Counter(text))


def node_diff(before: Node, after: Node) -> tuple[dict[str, Any], dict[str, Any]]:
    """The op-log form of an update: only the fields that changed.

    Provenance only grows on update, so ``grounded_in`` is logged as the ids added rather
    than the whole list — a concept reinforced by its 1,000th event logs one id, not 1,000.
    """
    old: dict[str, Any] = {"id": before.id}
    new: dict[str, Any] = {"id": after.id}
    for key in ("text", "created_at", "access_count", "plan_id", "last_access"):
        if getattr(before, key) != getattr(after, key):
            old[key], new[key] = getattr(before, key), getattr(after, key)
    ba, aa = before.attrs, after.attrs
    changed = {k for k in set(ba) | set(aa) if ba.get(k) != aa.get(k)}
    if changed:
        old["attrs"] = {k: ba.get(k) for k in sorted(changed)}
        new["attrs"] = {k: aa.get(k) for k in sorted(changed)}
    b, a = before.grounded_in, after.grounded_in
    if a[:len(b)] == b:  # the usual case, appended to: no sets over a long provenance
        added, removed = list(a[len(b):]), []
    else:
        had, has = set(b), set(a)
        added = [e for e in a if e not in had]
        removed = [e for e in b if e not in has]
    if added:
        new["grounded_in_added"] = added
    if removed:
        old["grounded_in_removed"] = removed
    return old, new


# ------------------------------------------------------------------ validation
def validate_plan(plan: UpdatePlan, graph: WorkingGraph, settings: Settings) -> list[str]:
    """Every reason the plan cannot be applied to ``graph`` (empty: it can). Pure."""
    errors: list[str] = []
    ns = graph.namespace
    if plan.namespace is not None and plan.namespace != ns:
        return [f"plan is for namespace {plan.namespace!r}, not {ns!r}"]
    if len(plan.operations) > settings.max_ops_per_plan:
        return [(f"plan has {len(plan.operations)} operations; the limit is "
                 f"{settings.max_ops_per_plan}")]
    kinds: dict[str, NodeKind] = {}  # refs and ids created or removed in this plan
    removed: set[str] = set()
    removals = 0

    def kind_of(ref: str) -> NodeKind | None:
        if ref in removed:
            return None
        if ref in kinds:
            return kinds[ref]
        node = graph.get(ref)
        return node.kind if node is not None else None

    def check_grounding(i: int, grounded_in: list[str]) -> None:
        for ev in grounded_in:
            if kind_of(ev) is not NodeKind.EVENT:
                errors.append(f"op {i}: grounded_in {ev!r} is not an event of namespace {ns!r}")

    for i, op in enumerate(plan.operations):
        if isinstance(op, AddNode):
            if op.kind not in PLANNABLE_KINDS:
                errors.append(f"op {i}: plans cannot create events (events enter only "
                              "through the event log)")
                continue
            if op.ref in kinds or graph.get(op.ref) is not None or op.ref in graph.aliases:
                errors.append(f"op {i}: ref {op.ref!r} is already in use; ids are never reused")
                continue
            if not op.text.strip():
                errors.append(f"op {i}: a {op.kind.value} needs text")
            if len(op.text) > settings.max_node_text:
                errors.append(f"op {i}: text of {len(op.text)} characters exceeds "
                              f"{settings.max_node_text}")
            errors += [f"op {i}: {e}" for e in attrs_errors(op.attrs, op.text,
                                                             settings.max_attrs_bytes, op.kind)]
            if op.kind in GROUNDED_KINDS and not op.grounded_in:
                errors.append(f"op {i}: a {op.kind.value} must be grounded in at least one event")
            check_grounding(i, op.grounded_in)
            kinds[op.ref] = op.kind
        elif isinstance(op, AddEdge):
            src_kind, dst_kind = kind_of(op.src), kind_of(op.dst)
            if src_kind is None:
                errors.append(f"op {i}: unknown node {op.src!r} in namespace {ns!r}")
            if dst_kind is None:
                errors.append(f"op {i}: unknown node {op.dst!r} in namespace {ns!r}")
            if src_kind is None or dst_kind is None:
                continue
            rule = ONTOLOGY[op.type]
            if src_kind not in rule.sources or dst_kind not in rule.targets:
                errors.append(f"op {i}: {op.type.value} cannot go from {src_kind.value} to "
                              f"{dst_kind.value}")
            if op.weight is not None and not 0.0 <= op.weight <= 1.0:
                errors.append(f"op {i}: weight {op.weight} is outside [0, 1]")
            if graph.resolve(op.src) == graph.resolve(op.dst) and op.src not in kinds:
                errors.append(f"op {i}: an edge from a node to itself")
        elif isinstance(op, UpdateNode):
            k = kind_of(op.id)
            if k is None:
                errors.append(f"op {i}: unknown node {op.id!r} in namespace {ns!r}")
            elif k is NodeKind.EVENT:
                errors.append(f"op {i}: events are immutable; a plan cannot update {op.id!r}")
            if op.text is not None and (not op.text.strip()
                                        or len(op.text) > settings.max_node_text):
                errors.append(f"op {i}: invalid text for {op.id!r}")
            errors += [f"op {i}: {e}" for e in attrs_errors(op.attrs, op.text,
                                                             settings.max_attrs_bytes, k)]
            check_grounding(i, op.grounded_in)
        elif isinstance(op, MergeNodes):
            k1, k2 = kind_of(op.keep), kind_of(op.absorb)
            if k1 is None or k2 is None:
                errors.append(f"op {i}: unknown node in MERGE_NODES {op.keep!r} <- {op.absorb!r}")
            elif NodeKind.EVENT in (k1, k2):
                errors.append(f"op {i}: events cannot be merged")
            elif k1 is not k2:
                errors.append(f"op {i}: cannot merge a {k2.value} into a {k1.value}")
            elif graph.resolve(op.keep) == graph.resolve(op.absorb):
                errors.append(f"op {i}: a node cannot be merged into itself")
            else:
                removed.add(op.absorb)
        elif isinstance(op, RemoveNode):
            k = kind_of(op.id)
            removals += 1
            if k is None:
                errors.append(f"op {i}: unknown node {op.id!r} in namespace {ns!r}")
            elif k is NodeKind.EVENT:
                errors.append(f"op {i}: a plan cannot delete an event ({op.id!r}); use forget()")
            else:
                removed.add(op.id)
        elif isinstance(op, RemoveEdge):
            removals += 1
            if kind_of(op.src) is None or kind_of(op.dst) is None:
                errors.append(f"op {i}: unknown node in REMOVE_EDGE {op.src!r} -> {op.dst!r}")
            elif op.src not in kinds and op.dst not in kinds and graph.edge(
                graph.resolve(op.src), op.type, graph.resolve(op.dst)
            ) is None:
                errors.append(f"op {i}: no {op.type.value} edge {op.src!r} -> {op.dst!r}")
    if removals > settings.max_removals_per_plan:
        errors.append(f"plan removes {removals} items; the limit is "
                      f"{settings.max_removals_per_plan}")
    return errors


# --------------------------------------------------------------- application
class _Applier:
    """Applies a validated plan to a graph inside an open graph transaction."""

    def __init__(self, plan: UpdatePlan, graph: WorkingGraph, settings: Settings, at: float):
        self.plan, self.g, self.s, self.at = plan, graph, settings, at
        self.refs: dict[str, str] = {}
        self.result = ApplyResult(plan.plan_id)
        self.touched: set[str] = set()

    def rid(self, ref: str) -> str:
        node_id = self.g.resolve(self.refs.get(ref, ref))
        if node_id not in self.g:
            raise PlanError(f"unknown node {ref!r}")
        return node_id

    def log(self, op: str, target: str, before: Any, after: Any, reasoning: str,
            peer: str | None = None) -> None:
        self.g.add_op(OpRecord(self.g.namespace, 0, self.plan.plan_id, op, target,
                               before, after, reasoning or self.plan.reasoning, self.at, peer))

    def put_node(self, op: str, node: Node, before: Node | None, reasoning: str) -> None:
        self.g.put_node(node)
        self.touched.add(node.id)
        if before is None:
            self.log(op, node.id, None, node.to_dict(), reasoning)
        else:
            old_d, new_d = node_diff(before, node)
            self.log(op, node.id, old_d, new_d, reasoning)

    def put_edge(self, src: str, type_: EdgeType, dst: str, weight: float | None,
                 reasoning: str) -> Edge:
        rule = ONTOLOGY[type_]
        sk, dk = self.g.nodes[src].kind, self.g.nodes[dst].kind
        if sk not in rule.sources or dk not in rule.targets:
            raise PlanError(f"{type_.value} cannot go from {sk.value} to {dk.value}")
        old = self.g.edge(src, type_, dst)
        if old is not None:
            # An existing edge is reinforced rather than duplicated.
            new = old.with_changes(
                weight=min(1.0, max(old.weight, weight or 0.0) + self.s.edge_reinforce),
                updated_at=self.at,
            )
        else:
            new = Edge(self.g.namespace, src, dst, type_,
                       rule.prior if weight is None else weight, self.at, self.at,
                       self.plan.plan_id)
        self.g.put_edge(new)
        self.touched.update((src, dst))
        self.log("ADD_EDGE", src, None if old is None else old.summary(), new.summary(),
                 reasoning, peer=dst)
        return new

    def add_edge(self, src: str, type_: EdgeType, dst: str, weight: float | None,
                 reasoning: str) -> None:
        """An edge from a plan. A grounding edge from an event into a concept also keeps
        the concept's provenance, centroid, event count and strength up to date."""
        node = self.g.nodes[dst]
        if (type_ in (EdgeType.GROUNDS, EdgeType.REINFORCES)
                and node.kind is NodeKind.CONCEPT and src not in self.g.grounded(dst)
                and self.g.nodes[src].kind is NodeKind.EVENT):
            self.absorb_events(dst, [src], reasoning, strengthen=type_ is EdgeType.REINFORCES)
        self.put_edge(src, type_, dst, weight, reasoning)

    def absorb_events(self, cid: str, events: list[str], reasoning: str, *,
                      strengthen: bool) -> None:
        node = self.g.nodes[cid]
        have = self.g.grounded(cid)
        new_events = [e for e in dict.fromkeys(events) if e not in have]
        if not new_events:
            return
        count = int(node.attrs.get("event_count", len(node.grounded_in)))
        vec = self.g.node_vectors.get(cid)
        add = self.centroid(new_events)
        if add is not None:
            self.g.set_vector(cid, add if vec is None
                              else vec * max(count, 1) + add * len(new_events))
        attrs = {**node.attrs, "event_count": count + len(new_events),
                 "last_ts": max([float(node.attrs.get("last_ts", 0.0)),
                                 *(self.g.nodes[e].ts for e in new_events)])}
        if strengthen:
            attrs["strength"] = min(10.0, float(node.attrs.get("strength", 1.0))
                                    + self.s.strength_reinforce)
        self.put_node("UPDATE_NODE", node.with_changes(
            attrs=attrs, grounded_in=(*node.grounded_in, *new_events), updated_at=self.at
        ), node, reasoning)

    def near_duplicate(self, op: AddNode, centroid: np.ndarray | None) -> str | None:
        best, best_sim = None, 0.0
        for cid in self.g.of_kind(NodeKind.CONCEPT):
            sim = max(label_similarity(op.text, n) for n in self.g.nodes[cid].names())
            if sim > best_sim:
                best, best_sim = cid, sim
        if best is not None and best_sim >= self.s.merge_threshold:
            return best
        # A parent theme (attrs["level"] >= 1) lies near its children's centroids by
        # construction, so only its label can make it a duplicate.
        if centroid is not None and len(self.g.node_vectors) and not op.attrs.get("level"):
            hits = self.g.nearest(centroid, NodeKind.CONCEPT, 1)
            if hits and hits[0][1] >= self.s.merge_threshold:
                return hits[0][0]
        return None

    def centroid(self, event_ids: list[str]) -> np.ndarray | None:
        return self.g.event_centroid(event_ids)

    def reinforce_concept(self, cid: str, events: list[str], reasoning: str) -> None:
        self.absorb_events(cid, events, reasoning, strengthen=True)
        for ev in events:
            self.put_edge(ev, EdgeType.REINFORCES, cid, None, reasoning)
        self.result.reinforced.append(cid)

    def add_node(self, op: AddNode) -> None:
        grounded = [self.rid(e) for e in op.grounded_in]
        if op.kind is NodeKind.CONCEPT:
            centroid = self.centroid(grounded)
            dup = self.near_duplicate(op, centroid)
            if dup is not None:
                self.refs[op.ref] = dup
                self.reinforce_concept(dup, grounded, op.reasoning or "near-duplicate concept "
                                       "converted to reinforcement")
                return
        node_id = new_id(op.kind)
        attrs = dict(op.attrs)
        if op.kind is NodeKind.CONCEPT:
            attrs.setdefault("strength", 1.0)
            attrs.setdefault("event_count", len(grounded))
            attrs.setdefault("aliases", [])
        node = Node(node_id, self.g.namespace, op.kind, op.text.strip(), attrs,
                    tuple(dict.fromkeys(grounded)), self.at, self.at, self.at, 0,
                    self.plan.plan_id)
        self.refs[op.ref] = node_id
        self.put_node("ADD_NODE", node, None, op.reasoning)
        self.result.created[op.ref] = node_id
        if op.kind is NodeKind.CONCEPT:
            c = self.centroid(list(node.grounded_in))
            if c is not None:
                self.g.set_vector(node_id, c)

    def update_node(self, op: UpdateNode) -> None:
        nid = self.rid(op.id)
        node = self.g.nodes[nid]
        if node.kind is NodeKind.EVENT:
            raise PlanError(f"events are immutable ({nid})")
        attrs = dict(node.attrs)
        for k, v in op.attrs.items():
            if v is None:
                attrs.pop(k, None)
            else:
                attrs[k] = v
        # New evidence is appended; a habit grounded in thousands of events is not rebuilt.
        have = self.g.grounded(nid) if op.grounded_in else ()
        extra = [e for e in dict.fromkeys(self.rid(e) for e in op.grounded_in) if e not in have]
        grounded = (*node.grounded_in, *extra) if extra else node.grounded_in
        new = node.with_changes(text=op.text.strip() if op.text else node.text, attrs=attrs,
                                grounded_in=grounded, updated_at=self.at)
        self.put_node("UPDATE_NODE", new, node, op.reasoning)

    def merge(self, op: MergeNodes) -> None:
        if self.rid(op.keep) == self.rid(op.absorb):
            raise PlanError(f"MERGE_NODES of {op.keep!r} into itself (a ref that became "
                            "reinforcement of the same node)")
        merge_nodes(self.g, self.rid(op.keep), self.rid(op.absorb), at=self.at,
                    plan_id=self.plan.plan_id, reasoning=op.reasoning, touched=self.touched)

    def remove_node(self, op: RemoveNode) -> None:
        nid = self.rid(op.id)
        node = self.g.nodes[nid]
        if node.kind is NodeKind.EVENT:
            raise PlanError(f"a plan cannot delete an event ({nid})")
        neighbours = [other for other, _ in self.g.neighbors(nid)]
        self.g.remove_node(nid)
        self.touched.update(neighbours)
        self.touched.discard(nid)
        self.log("REMOVE_NODE", nid, node.to_dict(), None, op.reasoning)

    def remove_edge(self, op: RemoveEdge) -> None:
        key = (self.rid(op.src), op.type, self.rid(op.dst))
        old = self.g.edge(*key)
        if old is None:
            raise PlanError(f"no {op.type.value} edge {op.src} -> {op.dst}")
        self.g.remove_edge(key)
        self.touched.update((key[0], key[2]))
        self.log("REMOVE_EDGE", key[0], old.summary(), None, op.reasoning, peer=key[2])

    def run(self) -> ApplyResult:
        for op in self.plan.operations:
            if isinstance(op, AddNode):
                self.add_node(op)
            elif isinstance(op, AddEdge):
                src, dst = self.rid(op.src), self.rid(op.dst)
                if src != dst:
                    self.add_edge(src, op.type, dst, op.weight, op.reasoning)
            elif isinstance(op, UpdateNode):
                self.update_node(op)
            elif isinstance(op, MergeNodes):
                self.merge(op)
            elif isinstance(op, RemoveNode):
                self.remove_node(op)
            elif isinstance(op, RemoveEdge):
                self.remove_edge(op)
            self.result.applied += 1
        self.repair_and_check()
        return self.result

    def repair_and_check(self) -> None:
        for nid in sorted(self.touched):
            node = self.g.nodes.get(nid)
            if node is None or node.kind not in GROUNDED_KINDS:
                continue
            known = self.g.by_kind[NodeKind.EVENT]
            # Newest first: a concept grounded in thousands of events finds one at once.
            if not any(e in known for e in reversed(node.grounded_in)):
                raise PlanError(f"{node.kind.value} {nid} would not be grounded in any event")
            if node.kind in (NodeKind.CONCEPT, NodeKind.INTENT) and self.g.degree(nid) == 0:
                for ev in (e for e in node.grounded_in if e in known):
                    self.put_edge(ev, EdgeType.GROUNDS, nid, None, "orphan repair")
                self.result.repaired.append(nid)


def merge_nodes(
    graph: WorkingGraph,
    keep: str,
    absorb: str,
    *,
    at: float,
    plan_id: str,
    reasoning: str = "",
    touched: set[str] | None = None,
) -> None:
    """Fold ``absorb`` into ``keep`` (same kind): edges, aliases, provenance, counts.

    Parallel edges of one type keep the higher weight; the absorbed id keeps resolving to
    the survivor through an alias. Runs inside an open graph transaction.
    """
    if keep == absorb:
        raise PlanError(f"cannot merge {keep!r} into itself")
    k, a = graph.nodes[keep], graph.nodes[absorb]
    for e in list(graph.edges_of(absorb)):
        src = keep if e.src == absorb else e.src
        dst = keep if e.dst == absorb else e.dst
        graph.remove_edge(e.key)
        if src == dst:
            continue
        existing = graph.edge(src, e.type, dst)
        if existing is None or existing.weight < e.weight:
            graph.put_edge(e.with_changes(src=src, dst=dst,
                                          created_at=existing.created_at if existing else
                                          e.created_at))
        if touched is not None:
            touched.update((src, dst))
    aliases = list(dict.fromkeys(
        [*k.attrs.get("aliases", []), a.text, *a.attrs.get("aliases", [])]
    ))
    aliases = [x for x in aliases if x != k.text]
    grounded = tuple(dict.fromkeys([*k.grounded_in, *a.grounded_in]))
    attrs = {**a.attrs, **k.attrs, "aliases": aliases}
    if k.kind is NodeKind.CONCEPT:
        attrs["event_count"] = len(grounded)
        attrs["strength"] = max(float(k.attrs.get("strength", 1.0)),
                                float(a.attrs.get("strength", 1.0)))
        kw = list(dict.fromkeys([*k.attrs.get("keywords", []), *a.attrs.get("keywords", [])]))
        attrs["keywords"] = kw[:12]
    vk, va = graph.node_vectors.get(keep), graph.node_vectors.get(absorb)
    if vk is not None and va is not None:
        nk, na = max(1, len(k.grounded_in)), max(1, len(a.grounded_in))
        graph.set_vector(keep, vk * nk + va * na)
    elif va is not None:
        graph.set_vector(keep, va)
    new = k.with_changes(attrs=attrs, grounded_in=grounded, updated_at=at,
                         access_count=k.access_count + a.access_count,
                         last_access=max(k.last_access, a.last_access))
    graph.put_node(new)
    graph.remove_node(absorb)
    graph.set_alias(absorb, keep)
    graph.add_op(OpRecord(graph.namespace, 0, plan_id, "MERGE_NODES", keep, k.to_dict(),
                          new.to_dict(), reasoning, at))
    graph.add_op(OpRecord(graph.namespace, 0, plan_id, "MERGE_NODES", absorb, a.to_dict(),
                          {"merged_into": keep}, reasoning, at))
    if touched is not None:
        touched.add(keep)
        touched.discard(absorb)


def execute(plan: UpdatePlan, graph: WorkingGraph, settings: Settings, *, at: float
            ) -> ApplyResult:
    """Validate and apply ``plan`` inside the graph's open transaction (no store I/O)."""
    errors = validate_plan(plan, graph, settings)
    if errors:
        raise PlanError(f"plan {plan.plan_id} rejected: {errors[0]}"
                        + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                        errors=errors)
    return _Applier(plan, graph, settings, at).run()


def apply_plan(
    plan: UpdatePlan,
    graph: WorkingGraph,
    store: Store,
    settings: Settings,
    *,
    at: float,
    cursor: int | None = None,
) -> ApplyResult:
    """Apply ``plan`` to graph and store atomically; on any failure neither changes."""
    graph.begin()
    try:
        result = execute(plan, graph, settings, at=at)
        store.commit(graph.namespace, graph.changes(), cursor=cursor)
    except BaseException:
        graph.rollback()
        raise
    graph.commit()
    return result
