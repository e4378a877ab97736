"""``Memory``: the embedded, synchronous entry point of enfold.

    from enfold import Memory
    m = Memory.open("memory.db")
    m.add("Ran 10k this morning", source="Maya")
    m.stats()

``add()`` durably appends to the event log and returns the event id before any folding
(the log is the source of truth); folding then runs in order per namespace, and a crash
resumes from the cursor.

Several processes may open one store (a CLI next to a server, two workers). A namespace has
one writer at a time: whatever writes its graph (fold, consolidate, apply, feedback, tick)
holds the namespace's lease (:mod:`enfold.lease`), and a second writer waits — or, folding,
finds its events folded by the first and does nothing. Every commit is fenced by the
namespace's change token (:mod:`enfold.store.base`): a working graph that another writer
changed under it is dropped, reloaded and the work redone, never written over the other's.
"""

from __future__ import annotations

import enum
import functools
import logging
import sys
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Self, TypeVar

import numpy as np
from pydantic import ValidationError

from enfold import extras
from enfold.changeset import ChangeSet
from enfold.errors import (
    ConfigError,
    EnfoldError,
    InputError,
    NamespaceError,
    NotFound,
    PlanError,
    StaleGraph,
    StoreError,
)
from enfold.events import EventIn, event_from_mapping, event_record, make_event
from enfold.export import load_export, read_export, write_export
from enfold.graph import WorkingGraph
from enfold.intents import IntentEngine, IntentReport, list_intents
from enfold.lease import Leases
from enfold.model import Edge, Node, NodeKind, OpRecord, now, valid_namespace
from enfold.notify import Notification, Notifier, Subscription
from enfold.plan import UpdatePlan
from enfold.recall.pack import ContextPack
from enfold.session import NamespaceSession, SessionCache
from enfold.settings import Settings
from enfold.store import open_store
from enfold.store.base import Store
from enfold.timeline import EventPage, page_events
from enfold.usage import UsageLedger
from enfold.write.apply import ApplyResult, apply_plan
from enfold.write.fold import Folder, FoldReport, Planner
from enfold.write.people_index import PeopleIndex

if TYPE_CHECKING:
    from enfold.consolidate.run import ConsolidationReport
    from enfold.embed import Embedder
    from enfold.llm import LLMClient, LLMConfig
    from enfold.write.planner_llm import LLMPlanner

log = logging.getLogger("enfold.memory")
_T = TypeVar("_T")

#: The default of ``Settings.stale_retries``.
STALE_RETRIES: int = Settings.stale_retries



class _Default(enum.Enum):
    """The type of :data:`DEFAULT`."""

    TOKEN = "default"


#: ``Memory.open(embedder=DEFAULT)``: the store's own embedder, else MiniLM when installed.
DEFAULT = _Default.TOKEN


class Memory:
    """A memory over one store; namespaces are independent graphs within it."""

    def __init__(
        self,
        store: Store,
        *,
        namespace: str = "default",
        embedder: Embedder | None = None,
        planners: Iterable[Planner] = (),
        settings: Settings | None = None,
        auto_fold: bool = True,
        llm: LLMClient | None = None,
    ) -> None:
        """``llm``: the LLM client that writes fact statements, intent labels and answers
        (None: the one of an LLM planner among ``planners``, if there is one; else none, and
        those are extractive or templates, and :meth:`answer` gives the evidence only)."""
        self.store = store
        self.namespace = self._check_ns(namespace)
        if embedder is not None:  # vectors of two embedders never meet in one store
            from enfold.embed import check_vector_space

            check_vector_space(store.vector_spaces(), embedder)
            store.embedder_name = embedder.name
        self.embedder = embedder
        self.planners = list(planners)
        #: The LLM planner among the planners (its usage is persisted per namespace).
        self.llm_planner = _llm_planner_of(self.planners)
        #: The LLM client of this memory (None: no LLM is configured).
        self.llm: LLMClient | None = llm if llm is not None else (
            self.llm_planner.client if self.llm_planner is not None else None)
        self.settings = settings or Settings()
        self.auto_fold = auto_fold
        # Reads (recall, intents, tick) fold the backlog first, so they see every added
        # event. A server folding in the background turns this off to keep reads fast.
        self.fold_on_read = True
        #: The namespaces' sessions (working graph, lock, change-token fence), least
        #: recently used first, kept within ``session_budget_mb`` and ``session_max``.
        self.sessions = SessionCache(
            self._new_session, budget_bytes=int(self.settings.session_budget_mb * 2**20),
            max_sessions=self.settings.session_max, on_evict_error=_evict_error)
        self._fold_timings: dict[str, dict[str, float]] = {}  # ns -> stage -> seconds
        #: This memory's namespace leases: one writer per namespace across processes.
        self.leases = Leases(store)
        # the worker recall's lexical searches run ahead on (made on first use)
        self._search_ahead_pool: ThreadPoolExecutor | None = None
        #: What each namespace has spent (planner failures, LLM calls and tokens), kept
        #: in its graph meta across restarts.
        self.usage = UsageLedger(self.llm_planner)
        self._fold_errors: dict[str, str] = {}  # namespace → why the last add()'s fold failed
        self.notifier = Notifier()
        self.intent_engine = IntentEngine(self.settings,
                                          embedder_name=getattr(embedder, "name", None),
                                          labeler=self._llm_labeler())

    # ---------------------------------------------------------------- opening
    @classmethod
    def open(
        cls,
        target: str | Path = "enfold.db",
        *,
        namespace: str = "default",
        embedder: str | Embedder | None | _Default = DEFAULT,
        planner: str | Planner | None = "local",
        settings: Settings | None = None,
        auto_fold: bool = True,
        llm: LLMConfig | LLMClient | None = None,
        profile: str | Path | None = None,
    ) -> Memory:
        """Open a memory at a path or URL (``memory:``, ``sqlite:///x.db``, ``postgresql://…``).

        ``embedder`` is ``"minilm"``, ``"hash"``, ``"openai"``, an Embedder, or None (events
        are stored and folded without embeddings, so no concepts form). By default it is the
        embedder the store was built with, and for a new store MiniLM — the CLI's default —
        when the ``minilm`` extra is installed; without it the memory folds without
        embeddings and a warning says what to install. ``planner`` is ``"local"`` (the
        default), ``"llm"`` (needs ``llm``; the local planner stays behind it as the
        fallback), a Planner, or None (events are logged and admitted to the graph only).
        ``profile`` is the LLM planner's domain profile: ``"default"``, ``"software"``,
        ``"health"`` or a YAML path.

        What is configured is checked here: an embedder or planner whose extra is missing
        raises :class:`~enfold.errors.MissingExtra` (one line naming the extra) before
        anything is folded. Loading the model itself waits for the first embedding, or
        for :meth:`warm_up`.
        """
        settings = settings or Settings()
        store = open_store(target, dtype=settings.embedding_dtype)
        planners: list[Planner] = []
        client: LLMClient | None = None
        try:
            emb = _embedder(embedder, store, settings)
            if isinstance(planner, str):
                planners, client = cls._make_planners(planner, emb, settings, store=store,
                                                      llm=llm, profile=profile)
            elif planner is not None:
                planners = [planner]
            return cls(store, namespace=namespace, embedder=emb, planners=planners,
                       settings=settings, auto_fold=auto_fold, llm=client)
        except BaseException:  # what was opened here is closed here
            for made in planners if isinstance(planner, str) else ():
                close = getattr(made, "close", None)
                if callable(close):
                    close()
            store.close()
            raise

    def warm_up(self) -> None:
        """Load what folding and recall need now rather than on the first call: the
        embedding model (one text is embedded) and the English parse. ``enfold serve`` and
        ``enfold mcp`` call this at start, so a model that cannot load stops them there
        (:class:`~enfold.errors.EmbedderError`) and the first request is not the slow one."""
        from enfold.text import nlp

        if self.embedder is not None:
            self.embedder.embed(["warm up"])
        if self.planners:
            nlp.available()

    @staticmethod
    def _make_planners(
        name: str,
        embedder: Embedder | None,
        settings: Settings,
        *,
        store: Store | None = None,
        llm: LLMConfig | LLMClient | None = None,
        profile: str | Path | None = None,
    ) -> tuple[list[Planner], LLMClient | None]:
        """The planners ``name`` stands for, and the LLM client they use (None: no LLM)."""
        from enfold.write.planner_local import LocalPlanner

        if name == "local":
            return [LocalPlanner(settings, embedder)], None
        if name == "llm":
            if llm is None:
                raise ConfigError("planner 'llm' needs an LLM: pass llm=LLMConfig(base_url=…, "
                                  "model=…) (CLI: --llm-model or ENFOLD_LLM_MODEL)")
            from enfold.llm import LLMClient

            if not isinstance(llm, LLMClient):
                extras.require("llm")
            from enfold.write.planner_llm import LLMPlanner

            client = llm if isinstance(llm, LLMClient) else LLMClient(llm, settings=settings)
            return [LLMPlanner(client, settings, profile=profile, store=store),
                    LocalPlanner(settings, embedder)], client
        raise ConfigError(f"unknown planner {name!r} (use 'local' or 'llm')")

    def _search_pool(self) -> ThreadPoolExecutor:
        """The worker thread recall's lexical searches run ahead on (one per memory, made on
        first use; :mod:`enfold.recall.ahead`)."""
        if self._search_ahead_pool is None:
            self._search_ahead_pool = ThreadPoolExecutor(max_workers=1,
                                                         thread_name_prefix="enfold-search")
        return self._search_ahead_pool

    def close(self) -> None:
        pool, self._search_ahead_pool = self._search_ahead_pool, None
        if pool is not None:
            pool.shutdown(wait=True)
        try:
            self.save_vectors()
        except (OSError, EnfoldError) as exc:  # a cache: the next open rebuilds it
            log.warning("could not save the vector index files: %s", exc)
        try:
            # Graphs kept out of the collector's full passes (enfold.heap) are let go under
            # their locks, and none settles again: their objects go back to the collector.
            for session in self.sessions.resident():
                if session.settled_nodes:
                    with session.lock:
                        session.freeze_nodes = 0
                        session.drop()
        finally:
            for planner in self.planners:
                close = getattr(planner, "close", None)
                if callable(close):
                    close()
            self.leases.close()
            self.store.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------- namespaces
    @staticmethod
    def _check_ns(namespace: str) -> str:
        if not isinstance(namespace, str) or not valid_namespace(namespace):
            raise NamespaceError(
                f"invalid namespace {namespace!r}: use 1-128 letters, digits or _ . : @ -"
            )
        return namespace

    def _ns(self, namespace: str | None) -> str:
        return self.namespace if namespace is None else self._check_ns(namespace)

    def _new_session(self, ns: str) -> NamespaceSession:
        return NamespaceSession(ns, self.store, ann=self.settings.ann_options(),
                                vector_files=self._vector_file(ns),
                                on_load=lambda g: self._loaded(ns, g),
                                freeze_nodes=self.settings.gc_freeze_nodes)

    def _loaded(self, ns: str, g: WorkingGraph) -> None:
        """A namespace's working graph was (re)built from the store."""
        self.usage.restore(ns, g)
        # Concepts named outside the planner (grouping, forgetting) embed their candidate
        # phrases with the namespace's embedder too.
        from enfold.write.naming import ThemeNamer

        ThemeNamer.of(g).use(self.embedder)

    def _lock(self, ns: str) -> AbstractContextManager[NamespaceSession]:
        """The namespace's session for the block: pinned (never evicted meanwhile), its
        lock held, its working graph checked against the store's change token when this
        thread first takes it (see :mod:`enfold.session`)."""
        return self.sessions.using(ns)

    def _drop(self, ns: str) -> None:
        """Forget the namespace's working graph (held under its lock): the next use
        reloads it from the store."""
        with self._lock(ns) as session:
            session.drop()

    def graph(self, namespace: str | None = None) -> WorkingGraph:
        """The working graph of a namespace, loaded from the store on first use. Held
        outside :meth:`reading`, it is a snapshot: once its session is evicted (see
        ``session_budget_mb``) the namespace's next use loads a new one."""
        ns = self._ns(namespace)
        with self._lock(ns) as session:
            return session.graph()

    def _write(self, ns: str, work: Callable[[], _T], *, lease: bool = True,
               done: Callable[[], bool] | None = None,
               skipped: Callable[[], _T] | None = None) -> _T:
        """Run ``work`` as the namespace's one writer: holding its lease (waiting while
        another process holds it), and again on a reloaded working graph when a commit
        found that another writer changed the namespace first (:class:`StaleGraph`).

        While waiting, ``done()`` true means the holder did the work (``skipped()`` is
        returned); so does a lease still taken after ``leases.wait_s``, or without
        ``skipped`` a :class:`StoreError`. ``lease=False`` only retries; a write runs
        ``stale_retries`` times at most."""
        tries = self.settings.stale_retries
        for attempt in range(1, tries + 1):
            with self.leases.holding(ns, done=done) if lease else _held() as held:
                if not held:
                    if skipped is not None:
                        return skipped()
                    raise StoreError(f"namespace {ns!r} is being written by another process "
                                     f"(its lease stayed taken for {self.leases.wait_s:.0f} "
                                     "s); try again later")
                try:
                    return work()
                except StaleGraph as exc:
                    if attempt == tries:
                        raise
                    log.info("%s: reloading it and trying again", exc)
                    with self._lock(ns):
                        self._drop(ns)
        raise AssertionError("unreachable")

    def _edit(self, ns: str, edit: Callable[[WorkingGraph], _T]) -> _T:
        """``edit(graph)`` as the namespace's writer, under its lock (see :meth:`_write`)."""
        def work() -> _T:
            with self._lock(ns):
                return edit(self.graph(ns))
        return self._write(ns, work)

    def _vector_file(self, ns: str) -> Callable[[str], Path] | None:
        """Where namespace ``ns`` keeps its HNSW graphs beside the store (None: in RAM)."""
        if self.store.sidecar(ns, "events.usearch") is None:
            return None

        def path(name: str) -> Path:
            found = self.store.sidecar(ns, f"{name}.usearch")
            assert found is not None
            return found

        return path

    def save_vectors(self) -> None:
        """Write the HNSW graphs of the loaded namespaces that changed beside the store, so
        the next open restores them instead of building them (:meth:`close` does this)."""
        for resident in self.sessions.resident():
            with self._lock(resident.namespace) as session:
                session.save_vectors()

    def namespaces(self) -> list[str]:
        return self.store.namespaces()

    # ------------------------------------------------------------------ write
    def add(
        self,
        text: str,
        *,
        ts: Any = None,
        source: str | None = None,
        kind: str | None = None,
        id: str | None = None,
        meta: Mapping[str, Any] | None = None,
        namespace: str | None = None,
        fold: bool | None = None,
    ) -> str:
        """Durably append one event and return its id; then fold (unless ``fold=False``).

        Idempotent: the same external ``id`` (or the same text, source and time) returns
        the id of the event already stored.
        """
        ev = make_event(text, ts=ts, source=source, kind=kind, external_id=id, meta=meta,
                        settings=self.settings)
        return self._append([ev], self._ns(namespace), fold)[0]

    def add_many(
        self,
        events: Iterable[Mapping[str, Any] | EventIn],
        *,
        namespace: str | None = None,
        fold: bool | None = None,
        chunk: int = 500,
    ) -> list[str]:
        """Append many events (validated first: a bad one raises before any is stored
        in its chunk); returns their ids in order."""
        ns = self._ns(namespace)
        ids: list[str] = []
        buf: list[EventIn] = []
        for i, e in enumerate(events):
            try:
                buf.append(e if isinstance(e, EventIn) else event_from_mapping(e, self.settings))
            except InputError as exc:
                raise InputError(f"event {i}: {exc}") from exc
            if len(buf) >= chunk:
                ids += self._append(buf, ns, fold)
                buf = []
        if buf:
            ids += self._append(buf, ns, fold)
        return ids

    def _append(self, events: list[EventIn], ns: str, fold: bool | None) -> list[str]:
        at = now()
        records = [event_record(e, ns, at=at) for e in events]
        appended = self.store.append_events(ns, records)
        if self.auto_fold if fold is None else fold:
            try:
                self.fold(ns)
            except Exception as exc:
                # The append is acknowledged; raising now would make a caller that retries
                # without an id store the event twice. Folding resumes from the cursor on
                # the next add(), fold() or read, and stats() shows the error.
                self._fold_errors[ns] = f"{type(exc).__name__}: {exc}"[:500]
                log.error("folding namespace %s failed after an append; the events are "
                          "stored and fold on the next call", ns, exc_info=exc)
        return [a.id for a in appended]

    def fold(self, namespace: str | None = None, *, limit: int | None = None) -> FoldReport:
        """Fold pending events of a namespace (in log order) and return what was done.

        Folding holds the namespace's lease. While another process holds it, this waits
        until that process has folded the events pending now (then nothing is left to do
        here), or the lease is free, or ``leases.wait_s`` passed (the events stay pending).

        The intent layer's notifications are published once folding has released the
        namespace, so a subscriber may call back into the memory."""
        ns = self._ns(namespace)
        outbox: list[Notification] = []
        target: list[int] = []  # the events to wait for, read once the lease is busy

        def done() -> bool:
            if not target:
                target.append(self.store.last_seq(ns))
            return self.store.get_cursor(ns) >= target[0]

        try:
            return self._write(ns, lambda: self._fold(ns, limit, outbox), done=done,
                               skipped=FoldReport)
        finally:
            self.notifier.publish(outbox)

    def _idle(self, ns: str) -> bool:
        """Nothing to fold and no consolidation pass due: a read need not take the lease
        to fold first."""
        from enfold.consolidate.run import Scheduler

        if not self.store.shared:
            return False
        with self._lock(ns):
            if self.store.get_cursor(ns) < self.store.last_seq(ns):
                return False
            return not Scheduler.of(self.graph(ns), self.settings).tick(0)

    def _fold(self, ns: str, limit: int | None, outbox: list[Notification]) -> FoldReport:
        with self._lock(ns):
            kept = len(outbox)
            try:
                self._maybe_consolidate(ns)  # a pass left due by an idle spell runs first
                folder = Folder(self.graph(ns), self.store, self.settings, self.planners,
                                self.embedder, on_failure=self.usage.count_failure,
                                hook=self.intent_engine,
                                on_commit=lambda r: outbox.extend(r.notifications),
                                after_event=lambda _: self._maybe_consolidate(
                                    ns, events=1, commit=folder.defer, flush=folder.flush),
                                on_diverged=lambda: self._drop(ns),
                                timings=self._fold_timings.setdefault(ns, {}))
                report = folder.fold(limit=limit)
                if report.unplanned:
                    self.usage.count_unplanned(ns, len(report.unplanned))
                self._fold_errors.pop(ns, None)
                self.usage.save(ns, self.graph(ns), self.store)
                return report
            except StaleGraph:
                # What the refused group announced did not happen: its events fold again.
                del outbox[kept:]
                raise

    def _catch_up(self, ns: str) -> None:
        if self.fold_on_read and not self._idle(ns):
            self.fold(ns)

    def consolidate(self, namespace: str | None = None, *, full: bool = True
                    ) -> ConsolidationReport:
        """Run a consolidation pass now: over the whole graph, or with
        ``full=False`` over what changed since the last pass. Passes also run by themselves
        every ``consolidate_every`` folded events or after ``consolidate_idle_s`` idle."""
        from enfold.consolidate.run import run_pass

        ns = self._ns(namespace)
        self.fold(ns)
        return self._edit(ns, lambda g: run_pass(
            g, self.store, self.settings, full=full, writer=self._fact_writer(ns),
            embedder_name=getattr(self.embedder, "name", None)))

    def _maybe_consolidate(self, ns: str, events: int = 0,
                           commit: Callable[[ChangeSet], None] | None = None,
                           flush: Callable[[], None] | None = None) -> None:
        """An incremental pass when one is due: every ``consolidate_every`` folded events,
        or after ``consolidate_idle_s`` idle (a server calls ``fold()`` now and then).
        Inside a fold, ``commit`` hands the pass's writes to the fold's current group (one
        store transaction for both, in graph order), and ``flush`` writes the group's
        events if the pass fails: the pass is rolled back, the events folded before it are
        kept, so a pass that keeps failing cannot hold folding back."""
        from enfold.consolidate.run import Scheduler, run_pass

        g = self.graph(ns)
        if Scheduler.of(g, self.settings).tick(events):
            try:
                run_pass(g, self.store, self.settings, writer=self._fact_writer(ns),
                         embedder_name=getattr(self.embedder, "name", None), commit=commit)
            except StoreError:
                if flush is not None:
                    flush()
                raise
            except Exception as exc:
                # Rolled back with its region left dirty; it runs again after the next
                # consolidate_every events. Folding goes on: the pass cannot hold it back.
                self.usage.count_pass_failure(ns)
                log.error("consolidation pass of %s failed; folding goes on", ns,
                          exc_info=exc)
                if flush is not None:
                    flush()

    def _fact_writer(self, ns: str) -> Callable[..., str] | None:
        """Fact statements by the LLM in llm mode (None: the template statement)."""
        client = self.llm
        if client is None:
            return None
        from enfold.write.planner_llm import LLMWriter

        return functools.partial(LLMWriter(client).fact_statement, namespace=ns)

    def _llm_labeler(self) -> Callable[[str, Any, str], str] | None:
        """Intent labels by the LLM in llm mode (None: templates)."""
        client = self.llm
        if client is None:
            return None
        from enfold.write.planner_llm import LLMWriter

        writer = LLMWriter(client)
        return lambda category, evidence, ns: writer.intent_label(
            list(evidence), namespace=ns, category=category)

    def apply(self, plan: UpdatePlan | Mapping[str, Any], *, namespace: str | None = None
              ) -> ApplyResult:
        """Validate and apply an UpdatePlan (e.g. written by your own agent) atomically."""
        ns = self._ns(namespace)
        try:
            p = plan if isinstance(plan, UpdatePlan) else UpdatePlan.model_validate(plan)
        except ValidationError as exc:
            raise PlanError(f"malformed plan: {exc.errors()[0]['msg']} at "
                            f"{'.'.join(map(str, exc.errors()[0]['loc']))}",
                            errors=[str(e) for e in exc.errors()]) from exc
        return self._edit(ns, lambda g: apply_plan(p, g, self.store, self.settings, at=now()))

    def update_event(self, event_id: str, meta: Mapping[str, Any], *, merge: bool = True,
                     namespace: str | None = None) -> Node:
        """Change an event's metadata (its text, time and speaker never change: forget
        the event and add another for that). ``merge``: ``meta`` is a JSON Merge Patch
        (RFC 7396: a key set to None is removed, objects merge); otherwise it replaces the
        metadata. Checked as a new event's meta is; recorded in the op log
        (``UPDATE_META``). What folding read from the metadata (``participants``) is not
        folded again. Returns the updated event."""
        from enfold.events import check_meta, merge_patch

        ns = self._ns(namespace)
        patch = check_meta(meta, self.settings)

        def work() -> Node:
            with self._lock(ns):
                g = self.graph(ns)
                folded = g.get(event_id)
                node = folded if folded is not None else self.store.get_node(ns, event_id)
                if node is None or node.kind is not NodeKind.EVENT:
                    raise NotFound(f"no event {event_id!r} in namespace {ns!r}")
                old = dict(node.attrs.get("meta") or {})
                new = check_meta(merge_patch(old, patch) if merge else patch, self.settings)
                if new == old:
                    return node
                at = now()
                updated = node.with_changes(attrs={**node.attrs, "meta": new}, updated_at=at)
                op = OpRecord(ns, 0, "update-meta", "UPDATE_META", node.id, {"meta": old},
                              {"meta": new}, "the event's metadata was changed", at)
                if folded is None:  # still in the log only: the fold will read the new row
                    self.store.commit(ns, ChangeSet(nodes={node.id: updated},
                                                    before={node.id: node}, ops=[op]))
                    return updated
                g.begin()
                try:
                    g.put_node(updated)
                    g.add_op(op)
                    self.store.commit(ns, g.changes())
                except BaseException:
                    g.rollback()
                    raise
                g.commit()
                return updated

        return self._write(ns, work)

    # ---------------------------------------------------------------- intents
    def intents(self, *, status: str | Iterable[str] | None = "pending",
                category: str | None = None, namespace: str | None = None) -> list[Node]:
        """Intents (deadlines, habits, follow-ups, goals): ``status`` ``"pending"`` by
        default, or ``"open"``, ``"all"``, a status or a list of them; soonest due first."""
        ns = self._ns(namespace)
        self._catch_up(ns)
        with self._lock(ns):
            return list_intents(self.graph(ns), status=status, category=category)

    def feedback(self, intent_id: str, kind: str, *, label: str | None = None,
                 namespace: str | None = None) -> Node:
        """accept / modify (with a new ``label``) / defer / reject an intent; moves its
        category's calibration (CogniFold Eq. 2). Returns the updated intent."""
        ns = self._ns(namespace)

        def edit(g: WorkingGraph) -> Node:
            g.begin()
            try:
                node = self.intent_engine.feedback(g, intent_id, kind, label=label, at=now())
                self.store.commit(ns, g.changes())
            except BaseException:
                g.rollback()
                raise
            g.commit()
            return node
        return self._edit(ns, edit)

    def tick(self, at: Any = None, *, namespace: str | None = None) -> IntentReport:
        """Move the intent clock without an event (default: now): expire overdue intents and
        announce near deadlines."""
        from enfold.events import to_epoch

        ns = self._ns(namespace)
        self._catch_up(ns)
        when = now() if at is None else to_epoch(at)

        def edit(g: WorkingGraph) -> IntentReport:
            g.begin()
            try:
                report = self.intent_engine.tick(g, when)
                self.store.commit(ns, g.changes())
            except BaseException:
                g.rollback()
                raise
            g.commit()
            return report
        report = self._edit(ns, edit)
        self.notifier.publish(report.notifications)
        return report

    def subscribe(self, callback: Callable[[Notification], object], *,
                  types: Iterable[str] | None = None) -> Callable[[], None]:
        """Be told when an intent emerges, its deadline nears or a dormant concept wakes:
        ``callback(notification)`` after the change commits. Returns the unsubscriber."""
        return self.notifier.subscribe(callback, types=types)

    def notifications(self, *, types: Iterable[str] | None = None,
                      maxsize: int = 1000) -> Subscription:
        """An async iterator of notifications (create it inside a running event loop)."""
        return self.notifier.stream(types=types, maxsize=maxsize)

    # ------------------------------------------------------------------- read
    def get(self, node_id: str, *, namespace: str | None = None) -> Node:
        """A node by id (absorbed ids resolve to their survivor)."""
        ns = self._ns(namespace)
        with self._lock(ns):  # a fold in another thread may hold uncommitted changes
            node = self.graph(ns).get(node_id)
        if node is not None:
            return node
        alias = self.store.resolve_alias(ns, node_id)
        node = self.store.get_node(ns, alias or node_id)
        if node is None:
            raise NotFound(f"no node {node_id!r} in namespace {ns!r}")
        return node

    def edges(self, node_id: str, *, namespace: str | None = None) -> list[Edge]:
        ns = self._ns(namespace)
        with self._lock(ns):
            g = self.graph(ns)
            return list(g.edges_of(g.resolve(node_id)))

    @contextmanager
    def reading(self, namespace: str | None = None) -> Iterator[WorkingGraph]:
        """The working graph of a namespace held still: no fold or write of that namespace
        runs (in any thread) until the block ends. For readers that walk the graph."""
        ns = self._ns(namespace)
        with self._lock(ns):
            yield self.graph(ns)

    def history(self, node_id: str, *, namespace: str | None = None) -> list[OpRecord]:
        """The op-log entries that touched a node, oldest first."""
        ns = self._ns(namespace)
        node = self.get(node_id, namespace=ns)
        records = self.store.history(ns, node.id)
        if node.id != node_id:
            # An edge between the two (one record, under one end with the other as its
            # peer) is in both histories: once is enough.
            merged = {r.seq: r for r in (*records, *self.store.history(ns, node_id))}
            records = [merged[seq] for seq in sorted(merged)]
        return records

    def events(self, *, since: Any = None, until: Any = None, limit: int = 100,
               cursor: str | None = None, namespace: str | None = None) -> EventPage:
        """The namespace's events (folded or not) in time order, a page at a time:
        ``since <= ts < until`` (epoch seconds, a datetime or ISO 8601, as an event's
        ``ts``; None: unbounded), at most ``limit`` (1 to :data:`~enfold.timeline.MAX_PAGE`).
        Pass a page's ``next_cursor`` back as ``cursor`` for the page after it."""
        from enfold.events import to_epoch

        ns = self._ns(namespace)
        bounds = {}
        for name, value in (("since", since), ("until", until)):
            try:
                bounds[name] = None if value is None else to_epoch(value)
            except InputError as exc:
                raise InputError(f"invalid {name!r} {value!r}: {exc}") from exc
        return page_events(self.store, ns, since=bounds["since"], until=bounds["until"],
                           limit=limit, cursor=cursor)

    def unplanned_events(self, namespace: str | None = None) -> int:
        """Events folded bare because every planner failed on them (stored, searchable and
        marked with ``fold_error``): in one namespace, or in every namespace this process
        has folded or loaded when ``namespace`` is None."""
        if namespace is None:
            return self.usage.unplanned()
        ns = self._ns(namespace)
        with self._lock(ns):
            self.graph(ns)  # restores the count kept in the store
            return self.usage.unplanned(ns)

    def fold_timings(self, namespace: str | None = None) -> dict[str, float]:
        """Seconds this process has spent folding the namespace, by stage (see
        :data:`enfold.write.fold.STAGES`); also in :meth:`stats` as ``fold_s``."""
        return dict(self._fold_timings.get(self._ns(namespace), {}))

    def stats(self, namespace: str | None = None) -> dict[str, Any]:
        ns = self._ns(namespace)
        c = self.store.counts(ns)
        out: dict[str, Any] = {
            "namespace": ns,
            "events": c["events"],
            "folded": c["folded"],
            "pending": 0,
            "nodes": c["nodes"],
            "edges": c["edges"],
            "store": self.store.url,
            "embedder": getattr(self.embedder, "name", None),
            "planner": [p.name for p in self.planners],
        }
        out["pending"] = c["events"] - c["folded"]
        if ns in self._fold_errors:  # the last add() stored its events but could not fold
            out["fold_error"] = self._fold_errors[ns]
        # Seconds this process has spent folding the namespace, by stage (see
        # enfold.write.fold.STAGES): where ingest time goes.
        out["fold_s"] = {k: round(v, 6) for k, v in self.fold_timings(ns).items()}
        with self._lock(ns):
            self.graph(ns)  # restores the counters kept in the store
            # planner_failures, and llm (calls, tokens, failures, fallbacks) when an LLM
            # was ever used in this namespace
            out.update(self.usage.report(ns))
        return out

    # ----------------------------------------------------------------- recall
    def recall(
        self,
        query: str,
        *,
        k: int | None = None,
        at: Any = None,
        kinds: Iterable[str | NodeKind] | None = None,
        namespace: str | None = None,
        touch: bool = True,
    ) -> ContextPack:
        """Evidence for ``query``: ranked source events (verbatim, with ids, speakers and
        times), concepts, facts, claims with their holders, intents, and the operator path of
        each. ``at`` is when the question is asked (for "last week"); ``kinds`` limits the
        sections returned. Recalled nodes get their access statistics updated."""
        from enfold.events import to_epoch
        from enfold.recall.ahead import SearchAhead
        from enfold.recall.analyze import analyze
        from enfold.recall.controller import Lexical, lexical_calls, lexical_query
        from enfold.recall.controller import recall as run_recall

        if not isinstance(query, str) or not query.strip():
            raise InputError("query must be a non-empty string")
        ns = self._ns(namespace)
        k = self.settings.recall_k if k is None else k
        if k <= 0:
            raise InputError("k must be positive")
        self._catch_up(ns)
        with self._lock(ns):
            g = self.graph(ns)

            def lexical(q: str, knd: Iterable[NodeKind], n: int) -> list[tuple[str, float]]:
                return self.store.search_text(ns, q, knd, n,
                                              max_rows=self.settings.lexical_rows or None)

            search: Lexical = lexical
            if self.settings.search_ahead:
                search = SearchAhead(lexical, lexical_query(query), lexical_calls(self.settings),
                                     self._search_pool())
            try:
                when = None if at is None else datetime.fromtimestamp(to_epoch(at), tz=UTC)
                analysis = analyze(query, at=when, known_keys=PeopleIndex.of(g).asked())
                qvec = None
                if self.embedder is not None:
                    qvec = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
                pack = run_recall(g, search, analysis, qvec, self.settings, k=k,
                                  embedder=None if self.embedder is None
                                  else self.embedder.name,
                                  weights=functools.partial(self.store.word_weights, ns))
            finally:
                if isinstance(search, SearchAhead):
                    search.settle()
            if kinds is not None:
                wanted = {NodeKind(x) for x in kinds}
                for kind, attr in ((NodeKind.EVENT, "evidence"), (NodeKind.CONCEPT, "concepts"),
                                   (NodeKind.FACT, "facts"), (NodeKind.CLAIM, "claims"),
                                   (NodeKind.INTENT, "intents")):
                    if kind not in wanted:
                        setattr(pack, attr, [])
            if touch:
                self._touch(g, [i.id for i in (*pack.evidence, *pack.concepts, *pack.facts,
                                               *pack.claims, *pack.intents)])
            return pack

    def _touch(self, g: WorkingGraph, ids: list[str]) -> None:
        """Hebbian signal: recalled nodes become more accessed and more recent. The store
        adds to its counts in place (other processes may have touched or rewritten the
        nodes since this graph was loaded); the working graph follows."""
        at = now()
        touched = [i for i in dict.fromkeys(ids) if i in g.nodes]
        self.store.touch(g.namespace, touched, at)
        g.begin()
        try:
            for node_id in touched:
                node = g.nodes[node_id]
                g.put_node(node.with_changes(access_count=node.access_count + 1,
                                             last_access=max(node.last_access, at)),
                           persist=False)
        except BaseException:
            g.rollback()
            raise
        g.commit()

    def answer(self, query: str, *, k: int | None = None, at: Any = None,
               namespace: str | None = None) -> ContextPack:
        """Recall, then ask the configured LLM to answer from the pack. Without an LLM the
        pack comes back with ``answer=None`` and a note: no answer is ever fabricated."""
        pack = self.recall(query, k=k, at=at, namespace=namespace)
        client = self.llm
        if client is None:
            pack.note = "no LLM is configured: no answer was generated; the evidence is above"
            return pack
        from enfold.write.planner_llm import LLMWriter

        ns = self._ns(namespace)
        try:
            pack.answer = LLMWriter(client).answer(
                query, pack.render(self.settings.context_tokens), namespace=ns)
        finally:
            def save() -> None:
                with self._lock(ns):
                    self.usage.save(ns, self.graph(ns), self.store)
            self._write(ns, save, lease=False)
        return pack

    # ----------------------------------------------------------------- forget
    def forget(self, event_id: str, *, namespace: str | None = None) -> dict[str, Any]:
        """Delete an event and everything derived from it, its words included.

        Derived nodes lose it from their provenance; those it alone grounded go, and those
        whose text came from it are rebuilt from their remaining evidence (or go, when that
        cannot rebuild them); see :mod:`enfold.forget`. The op log of what went is
        erased and the records of the survivors that hold its words are redacted; its
        embeddings leave the cache (under every embedder's name). Then the store erases the
        deleted content from its files as far as the backend can: ``report["erased"]`` is
        true when they no longer hold it (SQLite, once its log is checkpointed; never on
        PostgreSQL; see docs/forgetting.md). Returns ``{"event", "removed", "updated",
        "rebuilt", "erased"}``.
        """
        from enfold.forget import forget

        ns = self._ns(namespace)
        embedder = None if self.embedder is None else self.embedder.name

        def work() -> dict[str, Any]:
            with self._lock(ns) as session:
                return forget(session, event_id, settings=self.settings, embedder=embedder)

        # One writer (the lease), and again on a reloaded graph if another process wrote.
        report = self._write(ns, work)
        report["erased"] = self.store.erase_deleted()
        return report

    def wipe(self, namespace: str | None = None) -> bool:
        """Delete everything of one namespace; then the store erases the deleted content
        from its files as far as the backend can (true when they no longer hold it, as
        ``forget``'s ``erased``; see docs/forgetting.md)."""
        ns = self._ns(namespace)
        with self._lock(ns) as session:
            self.store.wipe(ns)
            session.discard_vector_files()  # loaded or not: an evicted one saved them
            session.drop()
        return self.store.erase_deleted()

    # --------------------------------------------------------- export/import
    def export(self, fp: IO[str], *, namespace: str | None = None) -> int:
        """Write a namespace as JSON Lines (events, nodes, edges, vectors, aliases, op log,
        meta, cursor; see :mod:`enfold.export`). Returns the number of lines."""
        ns = self._ns(namespace)
        with self._lock(ns):
            self.fold(ns, limit=0)
            return write_export(self.store, ns, fp)

    def import_(self, lines: Iterable[str], *, namespace: str | None = None) -> dict[str, int]:
        """Load an export into a namespace that has no events yet (the whole file is
        checked first: a bad one stores nothing). Returns the lines read per record type."""
        ns = self._ns(namespace)
        export = read_export(lines, ns)
        with self.leases.holding(ns) as held, self._lock(ns) as session:
            if not held:
                raise StoreError(f"namespace {ns!r} is being written by another process")
            load_export(self.store, ns, export)
            session.drop()
        return export.counts


def _llm_planner_of(planners: Sequence[Planner]) -> LLMPlanner | None:
    """The first LLM planner among ``planners`` (None: there is none). An LLMPlanner cannot
    exist unless its module was imported, so without it there is nothing to look for."""
    module = sys.modules.get("enfold.write.planner_llm")
    if module is None:
        return None
    return next((p for p in planners if isinstance(p, module.LLMPlanner)), None)


def _embedder(spec: str | Embedder | None | _Default, store: Store, settings: Settings
              ) -> Embedder | None:
    """The embedder ``Memory.open`` was asked for, its extra checked (see its docstring)."""
    from enfold.embed import MiniLMEmbedder, OpenAIEmbedder, make_embedder

    if spec is DEFAULT:
        names = {name for name, _ in store.vector_spaces().values() if name is not None}
        if len(names) == 1:
            try:
                spec = make_embedder(names.pop(), settings=settings)
            except ConfigError:  # one that needs connection details: asked for by name
                spec = "minilm"
        elif extras.installed("minilm"):
            spec = "minilm"
        else:
            warnings.warn("enfold: the MiniLM embedder is not installed, so this memory "
                          "folds without embeddings (no concepts form); pip install "
                          "'enfold[minilm]', or pass embedder='hash' for the test embedder",
                          stacklevel=3)
            return None
    emb = make_embedder(spec, settings=settings) if isinstance(spec, str) else spec
    if isinstance(emb, MiniLMEmbedder) and not emb.loaded:
        extras.require("minilm")
    elif isinstance(emb, OpenAIEmbedder):
        extras.require("llm", "the openai embedder")
    return emb


def _evict_error(namespace: str, exc: BaseException) -> None:
    """An evicted session's HNSW file could not be written: a cache, rebuilt on next load."""
    log.warning("could not save the vector index files of %s: %s", namespace, exc)


@contextmanager
def _held() -> Iterator[bool]:
    """Stands for a lease where none is needed."""
    yield True

