"""Folding: take logged events past the namespace's cursor and fold them into the graph.

For each event, in log order: admit it to the working graph with its embedding, ask the
planner for an UpdatePlan, validate and apply it, and advance the cursor — all in one
transaction, so a crash leaves the event either folded or still pending, never half-done.
A planner that fails (an invalid plan, an LLM error) falls back to the next planner in the
chain; if every planner fails the event is still admitted unfolded-by-plan and the failure
is recorded. Folding never loses or skips an event.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from enfold.changeset import ChangeSet
from enfold.errors import EnfoldError, StoreError
from enfold.graph import WorkingGraph
from enfold.model import Node, now
from enfold.plan import UpdatePlan
from enfold.settings import Settings
from enfold.store.base import Store
from enfold.write.apply import ApplyResult, execute

if TYPE_CHECKING:
    from enfold.embed import Embedder

log = logging.getLogger("enfold.fold")


class FoldHook(Protocol):
    """Runs inside each event's transaction after its plan (the intent layer); what it
    returns is handed to ``Folder.on_commit`` once that transaction has committed."""

    def on_event(self, event: Node, graph: WorkingGraph, result: ApplyResult | None = None,
                 *, at: float | None = None) -> Any: ...


class Planner(Protocol):
    """Turns one event and the graph around it into an UpdatePlan (the write path's planning
    step)."""

    name: str

    def plan(self, event: Node, graph: WorkingGraph) -> UpdatePlan: ...


#: The stages :attr:`Folder.timings` splits folding time into: ``embed`` (the batch's
#: embeddings, through the cache), ``plan`` (annotation, context, the planner, and its
#: bookkeeping after the plan), ``apply`` (validating and applying the plan), ``intents``
#: (the intent layer), ``consolidate`` (the automatic passes) and ``commit`` (writing each
#: group to the store).
STAGES = ("embed", "parse", "plan", "apply", "intents", "consolidate", "commit")


@dataclass
class FoldReport:
    """What a folding run did."""

    folded: int = 0
    plans: int = 0
    fallbacks: int = 0
    failures: list[str] = field(default_factory=list)
    created: int = 0
    reinforced: int = 0
    last_seq: int = 0
    #: Events folded bare: every planner failed on them (or their embedding did), so they
    #: are stored and searchable, marked with the error, and folding went on past them.
    unplanned: list[str] = field(default_factory=list)


#: Bumped when :func:`enfold.text.passages.passages` cuts texts differently (a new key for
#: the cached passage vectors).
PASSAGES_VERSION = 1


def text_hash(model: str, text: str) -> str:
    return hashlib.sha256(f"{model}\x00{text}".encode()).hexdigest()


def prepare_parses(events: Sequence[Node]) -> None:
    """Parse a batch of event texts in one pass of the pipeline (spaCy batches them far
    faster than one by one); the readers then find them cached. A failure here only costs
    speed: each reader parses its text again, or reads it by rules."""
    from enfold.text.nlp import parse_many

    try:
        parse_many([e.text for e in events])
    except Exception as exc:  # noqa: BLE001 - never let the parse stop folding
        log.warning("batch parse failed (%s); texts are parsed one by one", exc)


def passages_hash(model: str, text: str, version: int = 0) -> str:
    """The embedding cache's key for the vectors of ``text``'s passages (one row each), as
    the splitter of ``version`` (0: the current :data:`PASSAGES_VERSION`) cut them. Its
    input starts with a byte no model name holds (\x01), so no event text can share a key
    with another text's passages. A cached entry whose row count is not the number of
    passages the current settings give is embedded again."""
    v = version or PASSAGES_VERSION
    return hashlib.sha256(f"\x01passages\x00{model}\x00{v}\x00{text}".encode()).hexdigest()


def embed_events(
    events: Sequence[Node], embedder: Embedder | None, store: Store, namespace: str,
    settings: Settings | None = None,
) -> list[np.ndarray | None]:
    """Embeddings of the events' texts, through the store's cache (by content hash). A
    long text's row is a matrix: its whole text's vector first, then one per passage
    (:func:`enfold.text.passages.passages`), cached under :func:`passages_hash`."""
    if embedder is None or not events:
        return [None] * len(events)
    from enfold.text.passages import passages  # (imports the parser: only when folding)

    s = settings or Settings()
    texts: dict[str, str] = {}  # cache key -> text
    parts: dict[str, tuple[str, list[str]]] = {}  # cache key -> (its text's key, passages)
    keys: list[tuple[str, str | None]] = []
    for e in events:
        whole = text_hash(embedder.name, e.text)
        texts[whole] = e.text
        found = passages(e.text, s)
        key = passages_hash(embedder.name, e.text) if found else None
        if key is not None:
            parts[key] = (whole, found)
        keys.append((whole, key))
    cached = store.cached_vectors(namespace, embedder.name, [*texts, *parts])

    def fits(key: str) -> bool:
        """Cached rows of the passages these settings cut, as wide as the text's vector
        (not: cut by other settings before)."""
        whole, found = parts[key]
        return key in cached and whole in cached \
            and cached[key].size == len(found) * cached[whole].shape[-1]

    single = [k for k in texts if k not in cached]
    several = [k for k in parts if not fits(k)]
    if single or several:
        batch = [texts[k] for k in single] + [p for k in several for p in parts[k][1]]
        vecs = [np.asarray(v, dtype=np.float32) for v in embedder.embed(batch)]
        fresh = list(zip(single, vecs[:len(single)], strict=True))
        at = len(single)
        for k in several:
            n = len(parts[k][1])
            fresh.append((k, np.stack(vecs[at:at + n]).reshape(-1)))
            at += n
        store.cache_vectors(namespace, embedder.name, fresh)
        cached.update(fresh)
    return [cached[whole] if key is None else np.vstack(
                [cached[whole][None, :], cached[key].reshape(-1, cached[whole].shape[-1])])
            for whole, key in keys]


#: A text any working embedder embeds: how a failed batch tells a broken embedder (raise,
#: and fold again later) from texts it cannot embed (fold those without a vector).
_PROBE = "probe"


def embed_each(
    events: Sequence[Node], embedder: Embedder | None, store: Store, namespace: str,
    settings: Settings | None = None,
) -> list[np.ndarray | None]:
    """Like :func:`embed_events`, after a batch failed: one event at a time, so one text the
    embedder chokes on is folded without a vector instead of holding its namespace back.
    Raises the batch's error if the embedder fails a probe text too (it is down)."""
    out: list[np.ndarray | None] = []
    whole_only = replace(settings or Settings(), passage_max=0)
    for event in events:
        try:
            out.extend(embed_events([event], embedder, store, namespace, settings))
            continue
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - any failure of one text, probed below
            error: Exception = exc
        try:  # its passages may be what failed: the whole text alone, then
            out.extend(embed_events([event], embedder, store, namespace, whole_only))
            log.warning("embedder %s failed on the passages of event %s; folding it with "
                        "its whole text's vector only: %s", getattr(embedder, "name", "?"),
                        event.id, error)
            continue
        except StoreError:
            raise
        except Exception as exc:  # noqa: BLE001 - probed below
            error = exc
        assert embedder is not None
        embedder.embed([_PROBE])  # raises when the embedder itself is broken
        log.error("embedder %s failed on event %s; folding it without a vector: %s",
                  embedder.name, event.id, error)
        out.append(None)
    return out


@dataclass
class Folder:
    """Folds one namespace's pending events, strictly in order."""

    graph: WorkingGraph
    store: Store
    settings: Settings
    planners: Sequence[Planner]
    embedder: Embedder | None
    on_plan: Callable[[Node, UpdatePlan, ApplyResult], None] | None = None
    on_failure: Callable[[Node, str, BaseException], None] | None = None
    hook: FoldHook | None = None
    on_commit: Callable[[Any], None] | None = None
    after_event: Callable[[Node], None] | None = None  # after each event's commit

    # Called when a group's store transaction failed after the working graph had kept some
    # of the group's events: the graph is then ahead of the store and must be reloaded.
    # Without it every event is its own transaction.
    on_diverged: Callable[[], object] | None = None
    # Seconds spent per stage, added to across folds (see STAGES): where ingest time goes.
    timings: dict[str, float] = field(default_factory=dict)
    _pending: list[tuple[ChangeSet, int | None]] = field(default_factory=list, init=False)

    def _spent(self, stage: str, since: float) -> float:
        t = time.perf_counter()
        self.timings[stage] = self.timings.get(stage, 0.0) + (t - since)
        return t

    def fold(self, limit: int | None = None, batch: int = 256) -> FoldReport:
        """Fold the events after the namespace's cursor, in log order.

        Events are committed in groups (``fold_group_events``, at most ``fold_group_ms``
        per group): each event is planned and applied to the working graph on its own (a
        failed plan rolls back alone), and the group's change sets are then written in one
        store transaction — one fsync, and the store's write lock held only for the writes,
        never while a planner thinks. A group whose writes fail leaves the cursor before it
        (its events fold again) and reports the working graph as diverged.
        """
        report = FoldReport()
        ns = self.graph.namespace
        cursor = self.store.get_cursor(ns)
        while limit is None or report.folded < limit:
            take = batch if limit is None else min(batch, limit - report.folded)
            events = self.store.events_after(ns, cursor, take)
            if not events:
                break
            t0 = time.perf_counter()
            # Parsed first: a long text's passages are its parse's sentences.
            prepare_parses(events)
            t0 = self._spent("parse", t0)
            try:
                vectors = embed_events(events, self.embedder, self.store, ns, self.settings)
            except StoreError:
                raise
            except Exception:  # noqa: BLE001 - retried one by one, then probed
                vectors = embed_each(events, self.embedder, self.store, ns, self.settings)
            self._spent("embed", t0)
            i = 0
            while i < len(events):
                i = self._fold_group(events, vectors, i, report)
            cursor = report.last_seq
        return report

    def _fold_group(self, events: Sequence[Node], vectors: Sequence[np.ndarray | None],
                    start: int, report: FoldReport) -> int:
        """Fold ``events[start:]`` until the group is full; returns the next index."""
        grouped = self.on_diverged is not None
        size = max(1, self.settings.fold_group_events) if grouped else 1
        deadline = time.perf_counter() + self.settings.fold_group_ms / 1000.0
        i = start
        try:
            while i < len(events) and i - start < size \
                    and (i == start or time.perf_counter() < deadline):
                event = events[i]
                self.fold_one(event, vectors[i], int(event.attrs["seq"]), report)
                if self.after_event is not None:
                    t0 = time.perf_counter()
                    self.after_event(event)
                    self._spent("consolidate", t0)
                i += 1
            t0 = time.perf_counter()
            self.flush()
            self._spent("commit", t0)
        except BaseException:
            self._pending.clear()
            if self.on_diverged is not None:
                self.on_diverged()
            raise
        for event in events[start:i]:
            report.folded += 1
            report.last_seq = int(event.attrs["seq"])
        return i

    def defer(self, changes: ChangeSet, cursor: int | None = None) -> None:
        """Write a change set (and the cursor past its event, if any) with the current
        group — an event's changes, or a consolidation pass's between two events — or now
        when the folder does not group."""
        if self.on_diverged is None:
            self._write(changes, cursor)
        else:
            self._pending.append((changes, cursor))

    def flush(self) -> None:
        """Write the changes the working graph already holds, in order, in one store
        transaction (a consolidation pass between two events joins it through
        :meth:`defer`), so the store sees every change in graph order."""
        if not self._pending:
            return
        pending, self._pending = self._pending, []
        # One merged change set: a concept reinforced by ten events of the group is written
        # once, with its ten new provenance rows, instead of ten times.
        merged = ChangeSet()
        cursor: int | None = None
        for changes, at in pending:
            merged.absorb(changes)
            cursor = at if at is not None else cursor
        self._write(merged, cursor)

    def _write(self, changes: ChangeSet, cursor: int | None) -> None:
        # Not durable: folding is derived from the event log, whose appends are. A power
        # failure can undo a tail of folded groups, cursor included; they fold again.
        self.store.commit(self.graph.namespace, changes, cursor=cursor, durable=False)

    def _admit(self, event: Node, vec: np.ndarray | None) -> None:
        self.graph.put_node(event, persist=False)
        if vec is not None:
            self.graph.set_vector(event.id, vec)

    def fold_one(self, event: Node, vec: np.ndarray | None, seq: int, report: FoldReport
                 ) -> None:
        """Plan and apply one event, falling back along the planner chain.

        Any exception of a planner, of the executor or of the intent layer is that
        planner's failure (an unexpected one is logged with its traceback): the event's
        changes are rolled back and the next planner tries. An event no planner could fold
        is admitted bare, marked with the error, and the cursor moves past it, so no event
        can stop its namespace from folding. Store failures and interrupts propagate."""
        at = now()
        error: str | None = None
        for i, planner in enumerate(self.planners):
            self.graph.begin()
            try:
                self._admit(event, vec)
                t = time.perf_counter()
                plan = planner.plan(event, self.graph)
                t = self._spent("plan", t)
                result = execute(plan, self.graph, self.settings, at=at)
                t = self._spent("apply", t)
                hooked = self.hook.on_event(event, self.graph, result, at=at) \
                    if self.hook is not None else None
                self._spent("intents", t)
                self.defer(self.graph.changes(), seq)
            except StoreError:
                self.graph.rollback()
                raise
            except Exception as exc:
                self.graph.rollback()
                error = f"{planner.name}: {type(exc).__name__}: {exc}"[:500]
                report.failures.append(f"{event.id}: {error}")
                if isinstance(exc, EnfoldError):
                    log.warning("planner %s failed on %s: %s", planner.name, event.id, exc)
                else:
                    log.error("planner %s failed on %s", planner.name, event.id,
                              exc_info=exc)
                if self.on_failure is not None:
                    self.on_failure(event, planner.name, exc)
                if i + 1 < len(self.planners):
                    report.fallbacks += 1
                continue
            except BaseException:
                self.graph.rollback()
                raise
            self.graph.commit()
            after = getattr(planner, "after_apply", None)
            if after is not None:
                t = time.perf_counter()
                try:
                    after(event, self.graph, result)
                except Exception as exc:
                    log.error("planner %s failed after folding %s", planner.name, event.id,
                              exc_info=exc)
                self._spent("plan", t)
            if hooked is not None and self.on_commit is not None:
                self.on_commit(hooked)
            report.plans += 1
            report.created += len(result.created)
            report.reinforced += len(result.reinforced)
            if self.on_plan is not None:
                self.on_plan(event, plan, result)
            return
        # No planner (or every planner failed): the event is still admitted and the
        # cursor advances, so folding never stalls on one event.
        if error is None and vec is None and self.embedder is not None:
            error = "embedder: no vector (the embedder failed on this text)"
        if error is not None:
            report.unplanned.append(event.id)
        self.graph.begin()
        try:
            self._admit(event, vec)
            if error is not None:  # stored, searchable, and marked with why
                self.graph.put_node(event.with_changes(
                    attrs={**event.attrs, "fold_error": error}))
            self.defer(self.graph.changes(), seq)
        except BaseException:
            self.graph.rollback()
            raise
        self.graph.commit()
