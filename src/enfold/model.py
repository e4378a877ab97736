"""The data model: node kinds, edge types, the ontology table and the value types.

enfold's memory is a typed, directed multigraph per namespace. Events are the
episodic layer (immutable, verbatim); concepts, intents, facts and claims are derived from
them and carry their provenance (``grounded_in``); people and time anchors tie them together.

The ontology is data: :data:`ONTOLOGY` maps each edge type to its prior weight and allowed
endpoints, and the executor validates every plan against it. This module imports nothing
else of enfold.
"""

from __future__ import annotations

import hashlib
import os
import re
import secrets
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any


class NodeKind(StrEnum):
    """The seven node kinds (CogniFold's four plus PEC2F's person, claim and fact)."""

    EVENT = "event"
    CONCEPT = "concept"
    INTENT = "intent"
    TIME = "time"
    PERSON = "person"
    CLAIM = "claim"
    FACT = "fact"


class EdgeType(StrEnum):
    """The fourteen edge types: CogniFold's nine and PEC2F's five."""

    GROUNDS = "GROUNDS"
    CAUSES = "CAUSES"
    TRIGGERS = "TRIGGERS"
    REINFORCES = "REINFORCES"
    PART_OF = "PART_OF"
    DERIVED_FROM = "DERIVED_FROM"
    DEADLINE_FOR = "DEADLINE_FOR"
    RELATED_TO = "RELATED_TO"
    USER_FEEDBACK = "USER_FEEDBACK"
    SUPPORTED_BY = "SUPPORTED_BY"
    HOLDS = "HOLDS"
    ABOUT = "ABOUT"
    MENTIONS = "MENTIONS"
    PARTICIPATES = "PARTICIPATES"


ANY: frozenset[NodeKind] = frozenset(NodeKind)
_K = NodeKind


@dataclass(frozen=True)
class EdgeRule:
    """One row of the ontology: prior weight at creation and allowed endpoint kinds.

    ``provenance`` edges tie derived knowledge to the events it rests on; decay never takes
    them below the provenance floor and never deletes them (consolidation's decay).
    """

    type: EdgeType
    prior: float
    sources: frozenset[NodeKind]
    targets: frozenset[NodeKind]
    provenance: bool = False
    description: str = ""


def _rule(
    t: EdgeType,
    prior: float,
    sources: set[NodeKind] | frozenset[NodeKind],
    targets: set[NodeKind] | frozenset[NodeKind],
    description: str,
    provenance: bool = False,
) -> EdgeRule:
    return EdgeRule(t, prior, frozenset(sources), frozenset(targets), provenance, description)


ONTOLOGY: Mapping[EdgeType, EdgeRule] = {
    r.type: r
    for r in (
        _rule(EdgeType.GROUNDS, 0.9, {_K.EVENT}, {_K.CONCEPT, _K.INTENT, _K.FACT},
              "an event is evidence for a concept, intent or fact", provenance=True),
        _rule(EdgeType.CAUSES, 0.9, {_K.EVENT}, {_K.EVENT}, "one event caused another"),
        _rule(EdgeType.TRIGGERS, 0.8, {_K.CONCEPT, _K.EVENT}, {_K.INTENT},
              "a concept or event gives rise to an intent"),
        _rule(EdgeType.REINFORCES, 0.7, {_K.EVENT}, {_K.CONCEPT},
              "an event corroborates an existing concept"),
        _rule(EdgeType.PART_OF, 0.7, {_K.CONCEPT}, {_K.CONCEPT},
              "a concept is part of a broader one (child -> parent)"),
        _rule(EdgeType.DERIVED_FROM, 0.6, {_K.CONCEPT}, {_K.CONCEPT},
              "a concept was abstracted from another"),
        _rule(EdgeType.DEADLINE_FOR, 0.6, {_K.TIME}, {_K.INTENT},
              "a time anchor is the deadline of an intent"),
        _rule(EdgeType.RELATED_TO, 0.5, ANY, ANY, "a weaker association"),
        _rule(EdgeType.USER_FEEDBACK, 0.8, {_K.EVENT}, {_K.INTENT},
              "the user's feedback on an intent"),
        _rule(EdgeType.SUPPORTED_BY, 0.9, {_K.FACT, _K.CLAIM}, {_K.EVENT},
              "a fact or claim rests on this utterance", provenance=True),
        _rule(EdgeType.HOLDS, 0.9, {_K.PERSON}, {_K.CLAIM},
              "a person holds a claim", provenance=True),
        _rule(EdgeType.ABOUT, 0.8, {_K.CLAIM}, ANY, "what a claim is about"),
        _rule(EdgeType.MENTIONS, 0.6, {_K.EVENT}, {_K.PERSON, _K.TIME, _K.CONCEPT},
              "an event names a person, a time or a concept"),
        _rule(EdgeType.PARTICIPATES, 0.8, {_K.PERSON}, {_K.EVENT},
              "a person speaks in or is present at an event", provenance=True),
    )
}

#: Kinds that must be grounded in at least one event (the executor refuses them otherwise).
GROUNDED_KINDS: frozenset[NodeKind] = frozenset({_K.CONCEPT, _K.INTENT, _K.FACT})

#: Kinds whose nodes a plan may create (events enter only through the event log).
PLANNABLE_KINDS: frozenset[NodeKind] = frozenset(NodeKind) - {_K.EVENT}

_ID_PREFIX = {
    _K.EVENT: "ev",
    _K.CONCEPT: "co",
    _K.INTENT: "in",
    _K.TIME: "ti",
    _K.PERSON: "pe",
    _K.CLAIM: "cl",
    _K.FACT: "fa",
}

_NAMESPACE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:@-]{0,127}")


def valid_namespace(name: str) -> bool:
    """Namespaces are short identifiers: letters, digits and ``_ . : @ -``. The whole name
    must match (``$`` would let a trailing newline through)."""
    return isinstance(name, str) and _NAMESPACE_RE.fullmatch(name) is not None


class _IdClock:
    """20 hex digits that sort by creation time: 11 of milliseconds since the epoch, then
    9 that start random each millisecond and count up within it (so ids made in one
    process never repeat, and two processes starting the same millisecond collide with
    odds of about 2⁻³⁵). A forked child starts its own sequence.

    Ordered ids keep the store's B-trees growing at their right edge: a new event's rows,
    edges and op-log entries land on the last pages instead of on random ones, which is
    what keeps a large store's write cost per event flat."""

    _SPAN = 16**9

    def __init__(self) -> None:
        self.restart()

    def restart(self) -> None:
        """A new sequence (after a fork: a child must not continue its parent's)."""
        self._lock = threading.Lock()
        self._ms = -1
        self._n = 0

    def next(self) -> str:
        ms = time.time_ns() // 1_000_000
        with self._lock:
            if ms > self._ms:
                self._ms, self._n = ms, secrets.randbelow(self._SPAN // 2)
            else:  # the same millisecond (or the clock stepped back): count on
                self._n += 1
                if self._n >= self._SPAN:
                    self._ms, self._n = self._ms + 1, secrets.randbelow(self._SPAN // 2)
            return f"{self._ms:011x}{self._n:09x}"[-20:]


_IDS = _IdClock()
if hasattr(os, "register_at_fork"):  # a child must not continue the parent's sequence
    os.register_at_fork(after_in_child=_IDS.restart)


def new_id(kind: NodeKind) -> str:
    """A fresh, unique node id whose prefix tells the kind (``co_…`` a concept) and whose
    digits sort by creation time (see :class:`_IdClock`)."""
    return f"{_ID_PREFIX[kind]}_{_IDS.next()}"


def kind_of_id(node_id: str) -> NodeKind | None:
    """The kind encoded in an id's prefix, or None for a foreign id."""
    prefix = node_id.split("_", 1)[0]
    for kind, p in _ID_PREFIX.items():
        if p == prefix:
            return kind
    return None


def content_hash(text: str, source: str | None, ts: float) -> str:
    """The idempotency key of an event without an external id."""
    h = hashlib.sha256()
    h.update(text.encode("utf-8"))
    h.update(b"\x00")
    h.update((source or "").encode("utf-8"))
    h.update(b"\x00")
    h.update(repr(round(ts, 6)).encode("ascii"))
    return h.hexdigest()


def now() -> float:
    """Wall-clock time in epoch seconds (UTC); the one clock the library reads."""
    return time.time()


#: The times enfold accepts, in epoch seconds (UTC): from 1000-01-01 up to, not including,
#: 9000-01-01. A time outside is refused where it enters — an event's ``ts``, a recall's or
#: tick's ``at``, a plan's time attributes, a parsed expression — so the date arithmetic of
#: folding (the day after a date, "next year", a due date plus its grace) never leaves the
#: calendar Python can represent (years 1 to 9999).
TIME_MIN = -30_610_224_000.0
TIME_MAX = 221_845_392_000.0


def time_in_range(value: float) -> bool:
    """True for a finite epoch time within [TIME_MIN, TIME_MAX)."""
    return TIME_MIN <= value < TIME_MAX  # NaN compares False


def format_time(ts: Any, fmt: str = "%Y-%m-%d %H:%M") -> str:
    """An epoch time as UTC text; one outside the calendar (a store written before times
    were range-checked) as its number, so that showing it never fails."""
    try:
        return datetime.fromtimestamp(float(ts), tz=UTC).strftime(fmt)
    except (OverflowError, OSError, ValueError, TypeError):
        return repr(ts)


@dataclass(frozen=True)
class Node:
    """A node of any kind.

    ``text`` is the kind's main text: an event's verbatim words, a concept's label, an
    intent's label, a time anchor's normalized value, a person's name, a claim's content,
    a fact's statement. Kind-specific fields live in ``attrs`` (JSON values); each kind's
    are declared, typed and described by its model in :mod:`enfold.payloads`.
    """

    id: str
    namespace: str
    kind: NodeKind
    text: str
    attrs: Mapping[str, Any] = field(default_factory=dict)
    grounded_in: tuple[str, ...] = ()
    created_at: float = 0.0
    updated_at: float = 0.0
    last_access: float = 0.0
    access_count: int = 0
    plan_id: str | None = None

    def with_changes(self, **changes: Any) -> Node:
        return replace(self, **changes)

    def attr(self, name: str, default: Any = None) -> Any:
        return self.attrs.get(name, default)

    def names(self) -> list[str]:
        """The node's text and its aliases (a concept's, a person's); what is not a list of
        strings, as an imported node may hold, names nothing more."""
        aliases = self.attrs.get("aliases")
        if not isinstance(aliases, list):
            return [self.text]
        return [self.text, *(a for a in aliases if isinstance(a, str))]

    # Events carry their own time; derived nodes use their creation time.
    @property
    def ts(self) -> float:
        value = self.attrs.get("ts")
        return float(value) if value is not None else self.created_at

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "namespace": self.namespace,
            "kind": self.kind.value,
            "text": self.text,
            "attrs": dict(self.attrs),
            "grounded_in": list(self.grounded_in),
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "last_access": self.last_access,
            "access_count": self.access_count,
            "plan_id": self.plan_id,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Node:
        return cls(
            id=str(d["id"]),
            namespace=str(d["namespace"]),
            kind=NodeKind(d["kind"]),
            text=str(d["text"]),
            attrs=dict(d.get("attrs") or {}),
            grounded_in=tuple(d.get("grounded_in") or ()),
            created_at=float(d.get("created_at") or 0.0),
            updated_at=float(d.get("updated_at") or 0.0),
            last_access=float(d.get("last_access") or 0.0),
            access_count=int(d.get("access_count") or 0),
            plan_id=d.get("plan_id"),
        )


@dataclass(frozen=True)
class Edge:
    """A typed, weighted, directed edge. At most one edge per (src, type, dst)."""

    namespace: str
    src: str
    dst: str
    type: EdgeType
    weight: float
    created_at: float = 0.0
    updated_at: float = 0.0
    plan_id: str | None = None

    @property
    def key(self) -> tuple[str, EdgeType, str]:
        return (self.src, self.type, self.dst)

    def with_changes(self, **changes: Any) -> Edge:
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "src": self.src,
            "dst": self.dst,
            "type": self.type.value,
            "weight": self.weight,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            "plan_id": self.plan_id,
        }

    def summary(self) -> dict[str, Any]:
        """The edge as the op log records it: what it joins and its weight. The record
        itself carries the namespace, the plan and the time."""
        return {"src": self.src, "type": self.type.value, "dst": self.dst,
                "weight": round(self.weight, 6)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Edge:
        return cls(
            namespace=str(d["namespace"]),
            src=str(d["src"]),
            dst=str(d["dst"]),
            type=EdgeType(d["type"]),
            weight=float(d["weight"]),
            created_at=float(d.get("created_at") or 0.0),
            updated_at=float(d.get("updated_at") or 0.0),
            plan_id=d.get("plan_id"),
        )


@dataclass(frozen=True)
class OpRecord:
    """One applied operation in the op log: the audit trail and the source of history()."""

    namespace: str
    seq: int
    plan_id: str
    op: str
    target: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    reasoning: str
    at: float
    # An edge operation is one record under its source (``target``) that names its other
    # endpoint here: ``history()`` of either node includes it.
    peer: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "namespace": self.namespace,
            "seq": self.seq,
            "plan_id": self.plan_id,
            "op": self.op,
            "target": self.target,
            "before": self.before,
            "after": self.after,
            "reasoning": self.reasoning,
            "at": self.at,
            "peer": self.peer,
        }
