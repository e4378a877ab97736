"""The LLM planner: an OpenAI-compatible model as the central executive: it proposes
the UpdatePlan, the executor validates and applies it.

For each event :class:`LLMPlanner` writes an UpdatePlan in two parts:

* the **deterministic annotation ops** the local planner also writes — people, time anchors,
  claims, explicit obligations, causal links (:func:`enfold.write.planner_local.annotation_ops`);
* the **model's ops** — concepts, intents and the relations between them — from one chat
  call that sees the assembled context (:mod:`enfold.write.context`) through handles
  (:mod:`enfold.write.prompts`) and replies with JSON-schema-constrained output.

The reply is typed data: parsed into :class:`~enfold.write.prompts.PlanReply`, checked at the
handle level (every handle known, every edge allowed by the ontology, events untouchable),
converted into an :class:`~enfold.plan.UpdatePlan` (handles → ids, new refs kept as refs)
and validated against the graph with :func:`~enfold.write.apply.validate_plan`. On any error
the model is asked once more, with the errors; then the planner raises (PlanError,
LLMBadReply, or the client's LLMError) and the Folder falls back to the next planner — the
event is never lost. No prose is repaired with regexes.

**Micro-batching** (``batch_size > 1``, needs ``store``): on a fresh call the planner also
reads the next ``batch_size - 1`` logged events and asks for one plan covering all of them.
Each reply operation is due at the latest batch event it refers to; the planner serves each
event's share from a cache in ``graph.indexes`` as the Folder reaches that event, resolving
refs created by earlier shares through :meth:`LLMPlanner.after_apply`. A share that no longer
fits the graph (an earlier share fell back, a node vanished) drops the cache and that event
gets a fresh call, so batching never trades correctness for cost.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ValidationError

from enfold.errors import InputError, LLMBadReply, LLMError, PlanError
from enfold.events import to_epoch
from enfold.graph import WorkingGraph
from enfold.llm import BadJSONReply, LLMClient
from enfold.model import ONTOLOGY, EdgeType, Node, NodeKind
from enfold.payloads import INTENT_CATEGORIES, STRINGS, TIME, Expect, expect, llm_writable
from enfold.plan import (
    AddEdge,
    AddNode,
    MergeNodes,
    Operation,
    RemoveEdge,
    RemoveNode,
    UpdateNode,
    UpdatePlan,
)
from enfold.settings import Settings
from enfold.text.annotate import annotate
from enfold.text.speakers import speaker_name
from enfold.write import prompts as P
from enfold.write.apply import validate_plan
from enfold.write.context import ContextAssembler
from enfold.write.people_index import PeopleIndex
from enfold.write.planner_local import (
    LocalPlanner,
    _Builder,
    _find_person,
    _find_time,
    annotation_ops,
)

if TYPE_CHECKING:
    from enfold.store.base import Store
    from enfold.write.apply import ApplyResult

__all__ = ["LLMPlanner", "LLMWriter"]

log = logging.getLogger("enfold.planner_llm")

DAY = 86_400.0
REF_PREFIX = "llm:"
_OP_ERROR = re.compile(r"^op (\d+): ")  # the executor's own error format
#: The attributes the model may write on each kind, with their types (from the models).
_WRITABLE: Mapping[NodeKind, dict[str, Expect | None]] = {
    kind: {name: expect(info) for name, info in llm_writable(kind).items()}
    for kind in NodeKind}


# --------------------------------------------------------------- handle-level checks
@dataclass
class Analysis:
    """What a reply means before any graph lookup: when each op is due, and its errors."""

    due: list[int]
    defined: dict[str, int]  # model ref -> index of its ADD_NODE
    kinds: dict[str, NodeKind]  # model ref -> kind
    errors: list[str]


def _fields(op: P.ReplyOperation) -> list[tuple[str, str | None]]:
    """The node-referring fields an operation needs, by op name."""
    need = {"ADD_NODE": ("ref", "kind", "text"), "ADD_EDGE": ("src", "dst", "type"),
            "UPDATE_NODE": ("target",), "MERGE_NODES": ("src", "dst"),
            "REMOVE_NODE": ("target",), "REMOVE_EDGE": ("src", "dst", "type")}[op.op]
    return [(f, None if getattr(op, f) is None else str(getattr(op, f))) for f in need]


def analyse(reply: P.PlanReply, handles: P.HandleTable) -> Analysis:
    """Check a reply at the handle level and schedule each op to a batch event. Pure.

    Errors speak the model's language (operation numbers, handles), so they can go back to
    it verbatim. The executor re-checks everything against the graph afterwards.
    """
    a = Analysis([], {}, {}, [])
    for i, op in enumerate(reply.operations):
        name = f"operation {i + 1} ({op.op})"
        due = 0

        def kind_of(token: str, what: str, name: str = name) -> NodeKind | None:
            nonlocal due
            h = handles.get(token)
            if h is not None:
                due = max(due, h.position)
                return h.kind
            ref = token.strip()
            if ref in a.defined:
                due = max(due, a.due[a.defined[ref]])
                return a.kinds[ref]
            a.errors.append(f"{name}: unknown {what} {token!r}; use a [number] from the context,"
                            " an event handle like E1, or a ref added earlier in this reply")
            return None

        missing = [f for f, v in _fields(op) if v is None or not v.strip()]
        if missing:
            a.errors.append(f"{name}: needs {', '.join(missing)}")
            a.due.append(0)
            continue
        for token in op.grounded_in:
            if kind_of(token, "grounding event") not in (NodeKind.EVENT, None):
                a.errors.append(f"{name}: grounded_in {token!r} is not an event handle")
        if op.op == "ADD_NODE":
            ref, kind = str(op.ref).strip(), NodeKind(str(op.kind))
            if P.is_handle_like(ref) or ref in a.defined:
                a.errors.append(f"{name}: ref {ref!r} is taken; choose a new one like 'n1'")
            elif not op.grounded_in:
                a.errors.append(f"{name}: a {kind.value} must be grounded in at least one event")
            a.defined[ref], a.kinds[ref] = i, kind
        elif op.op in ("ADD_EDGE", "REMOVE_EDGE", "MERGE_NODES"):
            sk = kind_of(str(op.src), "source")
            dk = kind_of(str(op.dst), "target")
            if op.op == "MERGE_NODES":
                if NodeKind.EVENT in (sk, dk):
                    a.errors.append(f"{name}: events are the permanent record and cannot be "
                                    "merged")
                elif sk is not None and dk is not None and sk is not dk:
                    a.errors.append(f"{name}: cannot merge a {sk.value} into a {dk.value}")
            elif sk is not None and dk is not None and op.type is not None:
                rule = ONTOLOGY[op.type]
                if sk not in rule.sources or dk not in rule.targets:
                    a.errors.append(f"{name}: {op.type.value} cannot go from {sk.value} "
                                    f"{op.src} to {dk.value} {op.dst} (allowed: "
                                    f"{P._kinds(rule.sources)} -> {P._kinds(rule.targets)})")
        else:  # UPDATE_NODE, REMOVE_NODE
            if kind_of(str(op.target), "target") is NodeKind.EVENT:
                verb = "deleted" if op.op == "REMOVE_NODE" else "changed"
                a.errors.append(f"{name}: {op.target} is an event; events are the permanent "
                                f"record and cannot be {verb}")
        a.due.append(due)
    return a


# ------------------------------------------------------------------- conversion
class _Unresolved(Exception):
    pass


def convert_attrs(kind: NodeKind, attributes: Sequence[P.Attribute]) -> dict[str, Any]:
    """Key/value strings into node attrs, each by its type in the kind's payload model (in
    the form :data:`~enfold.write.prompts.ATTRIBUTE_FORMS` gives the model); raises
    ValueError naming a bad key or value. Only the attributes the models mark
    :data:`~enfold.payloads.LLM_WRITES` are allowed."""
    allowed = _WRITABLE[kind]
    out: dict[str, Any] = {}
    for attr in attributes:
        key, value = attr.key.strip(), attr.value.strip()
        if key not in allowed:
            raise ValueError(f"attribute {key!r} is not allowed on a {kind.value} "
                             f"(allowed: {', '.join(allowed) or 'none'})")
        if len(value) > 1000:
            raise ValueError(f"attribute {key!r} is longer than 1000 characters")
        form = allowed[key]
        if form is STRINGS:
            out[key] = [v.strip() for v in value.split(",") if v.strip()][:12]
        elif form is TIME:
            try:
                out[key] = to_epoch(value) if value else None
            except InputError as exc:
                raise ValueError(f"{key} {value!r} is not a date (use YYYY-MM-DD)") from exc
        elif key == "category":
            if value not in INTENT_CATEGORIES:
                raise ValueError(f"category {value!r} is not one of "
                                 f"{', '.join(INTENT_CATEGORIES)}")
            out[key] = value
        else:
            out[key] = value
    return out


def _lookup(graph: WorkingGraph, kind: NodeKind, text: str) -> str | None:
    """An annotated node created by an earlier event of the batch, found again by its text."""
    if kind is NodeKind.PERSON:
        return _find_person(graph, text)
    if kind is NodeKind.TIME:
        return _find_time(graph, text)
    key = P.new_key(kind, text)
    return next((n for n in graph.of_kind(kind) if P.new_key(kind, graph.nodes[n].text) == key),
                None)


class _Batches(dict[int, "_Batch"]):
    """Kept in ``graph.indexes``: each LLM planner's (by its id) batch being served."""

    @classmethod
    def of(cls, graph: WorkingGraph) -> _Batches:
        return graph.indexes.of(cls, cls)


@dataclass
class _Batch:
    """One reply covering ``events``; shares are served in order, one per event."""

    events: list[str]
    handles: P.HandleTable
    reply: P.PlanReply
    analysis: Analysis
    resolved: dict[str, str] = field(default_factory=dict)  # model ref -> node id
    in_flight: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    served: int = 0  # shares handed to the Folder
    applied: int = 0  # shares the Folder confirmed (after_apply)


@dataclass
class _Annotated:
    ops: list[Operation]
    nodes: dict[tuple[NodeKind, str], str]  # (kind, key) -> ref or id
    noted: list[P.Noted]


def annotated(event: Node, graph: WorkingGraph) -> _Annotated:
    """The deterministic annotation ops of an event, and the nodes they create or touch."""
    ann = annotate(event.text, ts=datetime.fromtimestamp(event.ts, tz=UTC),
                   speaker=speaker_name(event.attrs.get("source")),
                   known_keys=PeopleIndex.of(graph).known.keys())
    b = _Builder(event, graph)
    people = annotation_ops(b, ann)
    for claim_ref, target in b.claims:
        about = people.get(target) if target else None
        if about is not None:
            b.edge(claim_ref, EdgeType.ABOUT, about, "what the claim is about")
    nodes: dict[tuple[NodeKind, str], str] = {}
    noted: list[P.Noted] = []
    for op in b.ops:
        if isinstance(op, AddNode):
            nodes[(op.kind, P.new_key(op.kind, op.text))] = op.ref
            noted.append(P.Noted(op.kind, op.text, None, op.reasoning))
        elif isinstance(op, AddEdge):
            for end in (op.src, op.dst):
                node = graph.get(end)
                if node is None or node.kind is NodeKind.EVENT:
                    continue
                key = (node.kind, P.new_key(node.kind, node.text))
                if key not in nodes:
                    nodes[key] = node.id
                    noted.append(P.Noted(node.kind, node.text, node.id, op.reasoning))
    return _Annotated(list(b.ops), nodes, noted)


def materialize(batch: _Batch, k: int, event: Node, graph: WorkingGraph, ann: _Annotated
                ) -> tuple[list[Operation], list[int], list[str]]:
    """The plan operations of batch event ``k``'s share (handles resolved to ids/refs)."""
    a, reply = batch.analysis, batch.reply

    def rid(token: str) -> str:
        h = batch.handles.get(token)
        if h is not None:
            if h.node_id is not None:
                return h.node_id
            key = (h.kind, P.new_key(h.kind, h.text))
            found = ann.nodes.get(key) if h.position == k else _lookup(graph, h.kind, h.text)
            if found is None:
                raise _Unresolved(f"[{h.token}] ({h.kind.value} {h.text!r}) was not recorded")
            return found
        ref = token.strip()
        if a.due[a.defined[ref]] == k:
            return REF_PREFIX + ref
        if ref in batch.resolved:
            return batch.resolved[ref]
        raise _Unresolved(f"{ref!r} was not created")

    ops: list[Operation] = []
    index: list[int] = []
    errors: list[str] = []
    batch.in_flight = {}
    for i, op in enumerate(reply.operations):
        if a.due[i] != k:
            continue
        name = f"operation {i + 1} ({op.op})"
        try:
            grounded = [rid(t) for t in op.grounded_in]
            why = op.reasoning[:1000]
            if op.op == "ADD_NODE":
                kind = NodeKind(str(op.kind))
                attrs = _defaults(kind, event, graph, grounded)
                attrs.update(convert_attrs(kind, op.attributes))
                ref = str(op.ref).strip()
                ops.append(AddNode(ref=REF_PREFIX + ref, kind=kind, text=str(op.text).strip(),
                                   attrs=attrs, grounded_in=grounded, reasoning=why))
                batch.in_flight[ref] = (REF_PREFIX + ref, tuple(grounded))
            elif op.op == "ADD_EDGE":
                ops.append(AddEdge(src=rid(str(op.src)), dst=rid(str(op.dst)),
                                   type=EdgeType(str(op.type)), grounded_in=grounded,
                                   reasoning=why))
            elif op.op == "UPDATE_NODE":
                target = rid(str(op.target))
                h = batch.handles.get(str(op.target))
                kind = h.kind if h is not None else a.kinds[str(op.target).strip()]
                ops.append(UpdateNode(id=target, text=op.text.strip() if op.text else None,
                                      attrs=convert_attrs(kind, op.attributes),
                                      grounded_in=grounded, reasoning=why))
            elif op.op == "MERGE_NODES":
                ops.append(MergeNodes(keep=rid(str(op.dst)), absorb=rid(str(op.src)),
                                      grounded_in=grounded, reasoning=why))
            elif op.op == "REMOVE_NODE":
                ops.append(RemoveNode(id=rid(str(op.target)), grounded_in=grounded,
                                      reasoning=why))
            else:
                ops.append(RemoveEdge(src=rid(str(op.src)), dst=rid(str(op.dst)),
                                      type=EdgeType(str(op.type)), grounded_in=grounded,
                                      reasoning=why))
            index.append(i)
        except (_Unresolved, ValueError) as exc:
            errors.append(f"{name}: {exc}")
    return ops, index, errors


def _defaults(kind: NodeKind, event: Node, graph: WorkingGraph, grounded: list[str]
              ) -> dict[str, Any]:
    if kind is NodeKind.INTENT:
        return {"category": "goal", "status": "pending", "score": 1.0, "due": None,
                "history": [{"status": "pending", "at": event.ts}], "source": "llm"}
    stamps = [graph.nodes[e].ts for e in grounded if e in graph.nodes]
    return {"summary": "", "keywords": [], "aliases": [], "source": "llm",
            "last_ts": max(stamps, default=event.ts)}


def speak(error: str, handles: P.HandleTable, index: Sequence[int], offset: int) -> str:
    """An executor error in the model's terms: its operation number, handles instead of ids."""
    m = _OP_ERROR.match(error)
    if m is not None:
        i = int(m.group(1)) - offset
        if i < 0:
            raise PlanError(f"the annotation ops are invalid: {error}", errors=[error])
        error = f"operation {index[i] + 1}: " + error[m.end():]
    for h in handles:
        if h.node_id and h.node_id in error:
            error = error.replace(h.node_id, h.token if h.kind is NodeKind.EVENT
                                  else f"[{h.token}]")
    return error.replace(f"'{REF_PREFIX}", "'")


# -------------------------------------------------------------------- the planner
_PLANNER_COUNTERS = ("events", "from_batch", "plan_retries", "fallbacks", "stale_shares")


class LLMPlanner:
    """A planner whose concept, intent and relation ops come from an LLM; see the module."""

    name = "llm"

    def __init__(
        self,
        client: LLMClient,
        settings: Settings | None = None,
        *,
        profile: str | Path | P.Profile | None = None,
        batch_size: int | None = None,
        store: Store | None = None,
        loose_events: int = 12,
        recent_events: int = 3,
        max_tokens: int | None = 2048,
    ) -> None:
        """``batch_size`` defaults to the ``llm_batch`` setting; batching needs ``store``
        (to read the next logged events). ``loose_events``/``recent_events`` bound how many
        earlier events the prompt shows besides the context tiers."""
        self.client = client
        self.s = settings or Settings()
        self.profile = P.load_profile(profile)
        self.batch_size = max(1, self.s.llm_batch if batch_size is None else batch_size)
        self.store = store
        self.loose_events, self.recent_events = loose_events, recent_events
        self.max_tokens = max_tokens
        self.schema = P.reply_schema()
        self._local = LocalPlanner(self.s)  # keeps the shared planner state in step
        self._key = id(self)
        self._counts: dict[str, Counter[str]] = {}

    # ------------------------------------------------------------------ usage
    def usage(self, namespace: str | None = None) -> dict[str, int]:
        """The client's counters (calls, tokens, failures, retries) and the planner's:
        ``events`` planned, ``from_batch`` (served without a call), ``plan_retries``
        (replies sent back with errors), ``fallbacks`` (events handed to the next planner)."""
        out = dict(self.client.usage(namespace))
        rows = self._counts.values() if namespace is None else [self._counts.get(namespace,
                                                                                   Counter())]
        for key in _PLANNER_COUNTERS:
            out[key] = sum(r[key] for r in rows)
        return out

    def restore_usage(self, namespace: str, counts: Mapping[str, Any]) -> None:
        """Add the counters of :meth:`usage` recorded by an earlier process."""
        self.client.restore_usage(namespace, counts)
        row = self._counts.setdefault(namespace, Counter())
        for key in _PLANNER_COUNTERS:
            value = counts.get(key)
            if isinstance(value, int) and value > 0:
                row[key] += value

    def close(self) -> None:
        self.client.close()

    # ------------------------------------------------------------------- plan
    def plan(self, event: Node, graph: WorkingGraph) -> UpdatePlan:
        """The plan for ``event``: its share of a cached batch reply, or a fresh call.

        Raises PlanError, LLMBadReply or another LLMError when the model cannot produce a
        valid plan; the Folder then falls back to the next planner.
        """
        counts = self._counts.setdefault(graph.namespace, Counter())
        try:
            return self._plan(event, graph, counts)
        except (LLMError, PlanError):
            counts["fallbacks"] += 1
            raise

    def _plan(self, event: Node, graph: WorkingGraph, counts: Counter[str]) -> UpdatePlan:
        batches = _Batches.of(graph)
        batch = batches.pop(self._key, None)
        if (batch is not None and batch.served < len(batch.events)
                and batch.events[batch.served] == event.id and batch.applied == batch.served):
            plan, errors = self._share(batch, batch.served, event, graph)
            if plan is not None:
                batch.served += 1
                batches[self._key] = batch
                counts["events"] += 1
                counts["from_batch"] += 1
                return plan
            counts["stale_shares"] += 1
            log.info("batched share for %s no longer fits: %s", event.id, errors[:3])
        return self._fresh(event, graph, counts)

    def after_apply(self, event: Node, graph: WorkingGraph, result: ApplyResult) -> None:
        """Record what a share created (later shares may refer to it); keep the local
        planner's state and the context assembler in step."""
        batches = _Batches.of(graph)
        batch = batches.get(self._key)
        if batch is not None and batch.applied < batch.served \
                and batch.events[batch.applied] == event.id:
            for ref, (plan_ref, grounded) in batch.in_flight.items():
                node_id = result.created.get(plan_ref) or _absorbed(graph, result, grounded)
                if node_id is not None:
                    batch.resolved[ref] = node_id
            batch.applied += 1
            if batch.applied >= len(batch.events):
                batches.pop(self._key, None)
        self._local.after_apply(event, graph, result)

    # -------------------------------------------------------------- internals
    def _upcoming(self, event: Node, graph: WorkingGraph) -> list[Node]:
        seq = event.attrs.get("seq")
        if self.batch_size <= 1 or self.store is None or seq is None:
            return []
        after = self.store.events_after(graph.namespace, int(seq), self.batch_size - 1)
        return [e for e in after if e.id not in graph.nodes]

    def _loose(self, event: Node, graph: WorkingGraph, exclude: set[str]) -> list[str]:
        """Earlier events worth showing: similar ones not yet in a concept, and the latest."""
        st = self._local.state(graph)
        horizon = event.ts - self.s.cluster_window_days * DAY
        pool = [p for p in dict.fromkeys(st.pending)
                if p in graph.nodes and p not in exclude and graph.nodes[p].ts >= horizon]
        vec = graph.event_vectors.get(event.id)
        if vec is not None and pool:
            sims = graph.event_vectors.similarities(vec, pool)
            pool.sort(key=lambda p: -sims.get(p, 0.0))
        else:
            pool.reverse()
        recent = [r for r in reversed(st.recent) if r in graph.nodes and r not in exclude]
        chosen = dict.fromkeys([*pool[: self.loose_events], *recent[: self.recent_events]])
        return sorted(chosen, key=lambda i: graph.nodes[i].ts)

    def _share(self, batch: _Batch, k: int, event: Node, graph: WorkingGraph,
               ann: _Annotated | None = None) -> tuple[UpdatePlan | None, list[str]]:
        """Batch event ``k``'s plan: annotation ops plus its due model ops, validated."""
        ann = ann or annotated(event, graph)
        ops, index, errors = materialize(batch, k, event, graph, ann)
        if errors:
            return None, errors
        plan = UpdatePlan(event_id=event.id, namespace=graph.namespace, planner=self.name,
                          reasoning=batch.reply.reasoning[:2000] or "LLM plan",
                          operations=[*ann.ops, *ops])
        found = validate_plan(plan, graph, self.s)
        if found:
            return None, [speak(e, batch.handles, index, len(ann.ops)) for e in found]
        return plan, []

    def _fresh(self, event: Node, graph: WorkingGraph, counts: Counter[str]) -> UpdatePlan:
        """One call (and at most one retry) for this event and the next ones of the batch."""
        ns = graph.namespace
        events = [event, *self._upcoming(event, graph)]
        ctx = ContextAssembler.of(graph, self.s).assemble(event, graph.event_vectors.get(event.id))
        anns = [annotated(ev, graph) for ev in events]
        loose = self._loose(event, graph, {e.id for e in events})
        view = P.build_view(graph, events, ctx, loose, [a.noted for a in anns])
        messages: list[dict[str, str]] = P.plan_messages(self.profile, view)
        errors: list[str] = []
        raw = ""
        bad_json: BadJSONReply | None = None
        for attempt in range(2):
            if attempt:
                counts["plan_retries"] += 1
                messages = [*messages, {"role": "assistant", "content": raw[:8000]},
                            P.retry_message(errors)]
            bad_json = None
            try:
                reply = self.client.chat_json(messages, schema=self.schema,
                                              schema_name="update_plan", namespace=ns,
                                              max_tokens=self.max_tokens)
            except BadJSONReply as exc:
                raw, errors, bad_json = exc.content, [str(exc)], exc
                continue
            raw = reply.content
            parsed, errors = P.parse_reply(reply.data or {})
            if parsed is None:
                continue
            batch = _Batch([e.id for e in events], view.handles, parsed,
                           analyse(parsed, view.handles))
            errors = list(batch.analysis.errors)
            if errors:
                continue
            plan, errors = self._share(batch, 0, event, graph, anns[0])
            if plan is None:
                continue
            batch.served = 1
            _Batches.of(graph)[self._key] = batch
            counts["events"] += 1
            return plan
        if bad_json is not None:
            raise LLMBadReply(f"the LLM sent invalid JSON twice for {event.id}: "
                              f"{errors[0]}") from bad_json
        raise PlanError(f"the LLM's plan for {event.id} was rejected twice: {errors[0]}"
                        + (f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""),
                        errors=errors)


def _absorbed(graph: WorkingGraph, result: ApplyResult, grounded: tuple[str, ...]
              ) -> str | None:
    """The existing concept a near-duplicate new concept was turned into reinforcement of."""
    for cid in result.reinforced:
        node = graph.get(cid)
        if node is not None and set(grounded) <= set(node.grounded_in):
            return node.id
    return None


# -------------------------------------------------------------------- the writers
class LLMWriter:
    """Small LLM helpers beside planning: fact statements, intent labels and answers.

    Each is one typed call (JSON schema → pydantic model, one retry with the error) or,
    for answers, one text call. Errors are enfold's LLM errors; callers fall back to their
    deterministic wording.
    """

    def __init__(self, client: LLMClient, *, profile: str | Path | P.Profile | None = None,
                 max_tokens: int = 400) -> None:
        self.client = client
        self.profile = P.load_profile(profile)
        self.max_tokens = max_tokens

    def _ask(self, messages: list[dict[str, str]], schema: dict[str, Any], name: str,
             model: type[BaseModel], namespace: str, limit: int) -> str:
        error = ""
        for attempt in range(2):
            if attempt:
                messages = [*messages, {"role": "user", "content":
                                        f"Your reply was rejected: {error}. Reply again with "
                                        "the JSON object only."}]
            try:
                reply = self.client.chat_json(messages, schema=schema, schema_name=name,
                                              namespace=namespace, max_tokens=self.max_tokens)
                value = str(getattr(model.model_validate(reply.data or {}), name)).strip()
            except BadJSONReply as exc:
                error = str(exc)
                continue
            except ValidationError as exc:
                error = P._first_errors(exc)
                continue
            if not value:
                error = f"{name} is empty"
            elif len(value) > limit:
                error = f"{name} is longer than {limit} characters"
            else:
                return " ".join(value.split())
        raise LLMBadReply(f"the LLM could not write a {name}: {error}")

    def fact_statement(self, evidence: Sequence[str], *, namespace: str = "default",
                       subject: str | None = None, concept: str | None = None) -> str:
        """One sentence that a cluster of events jointly supports (fact consolidation)."""
        return self._ask(P.fact_messages(evidence, subject=subject, concept=concept),
                         P.STATEMENT_SCHEMA, "statement", P.StatementReply, namespace, 400)

    def intent_label(self, evidence: Sequence[str], *, namespace: str = "default",
                     category: str | None = None) -> str:
        """A short imperative label for an intent that emerged from ``evidence``."""
        return self._ask(P.intent_label_messages(evidence, category=category),
                         P.LABEL_SCHEMA, "label", P.LabelReply, namespace, 120)

    def answer(self, question: str, context_text: str, *, namespace: str = "default") -> str:
        """An answer to ``question`` grounded in recalled ``context_text``."""
        reply = self.client.chat_text(P.answer_messages(question, context_text, self.profile),
                                      namespace=namespace, max_tokens=self.max_tokens)
        text = reply.content.strip()
        if not text:
            raise LLMBadReply("the LLM sent an empty answer")
        return text
