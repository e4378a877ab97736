"""Namespace sessions: one namespace's working graph with its lock and change-token fence,
and the LRU that keeps a process's sessions within a memory budget.

A :class:`NamespaceSession` owns what a process holds of one namespace: the working graph
(loaded from the store on first use) and the derived indexes the algorithms keep on it, the
re-entrant lock that lets one thread at a time use it, and the :class:`~enfold.store.base.Fence`
holding the store's change token the graph mirrors. Another process (a second worker, the
CLI next to a server) may change the namespace in the store: taking the lock, a graph that
missed a change is dropped (it reloads on next use), and inside, every commit is checked
against the fence (a store no other process can reach, ``memory:``, needs neither).

:class:`SessionCache` hands sessions out and takes them back. A session handed out is
*pinned* until it comes back, and a pinned one is never evicted: an operation never finds
its graph gone under it, and there is only ever one session of a namespace in the process.
When one comes back and the sessions' estimated sizes add up to more than
``session_budget_mb`` (or there are more than ``session_max``), the least recently used
unpinned ones are evicted: their HNSW graphs are written beside the store (as
:meth:`~enfold.memory.Memory.close` writes them), then the working graph is let go. The
most recently used session always stays, however large. An evicted namespace is rebuilt
from the store on its next use, as a new process would open it.

The size estimate (:func:`estimate_bytes`) is cheap — counts kept by the graph and the
vector matrices' own sizes — and is measured, not derived: see :data:`NODE_BYTES`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from enfold import heap
from enfold.ann import AnnOptions
from enfold.graph import VECTOR_FILES, WorkingGraph
from enfold.store.base import Fence, Store

__all__ = ["EDGE_BYTES", "NODE_BYTES", "NamespaceLock", "NamespaceSession", "SessionCache",
           "SessionStats", "estimate_bytes"]

#: Bytes a node costs a session beyond its vector, the derived indexes kept on the graph
#: (people, time, triggers, context, PageRank, planner state) included. Measured with
#: tracemalloc on namespaces of 200, 800 and 2,000 folded events of the two synthetic
#: streams of the benchmarks (hash embedder), loaded in a fresh process and recalled five
#: times: about 1,400-1,600 traced bytes a node once edges (below) and vectors are taken
#: out; the constants add about a quarter for the allocator's overhead (RSS grew by 1.0-1.8
#: times the traced bytes in the same runs). ``enfold bench namespaces`` reports the
#: estimate beside the process's RSS.
NODE_BYTES = 2_000
#: Bytes an edge costs: the Edge object (about 480 bytes, measured with a deep getsizeof)
#: and its entries in the out, in and derived-link indexes (about 300, traced).
EDGE_BYTES = 1_000
#: Bytes a vector row costs beyond its matrix (its id, the row and HNSW key maps).
ROW_BYTES = 250


def estimate_bytes(graph: WorkingGraph) -> int:
    """The memory a loaded working graph holds, estimated from its node and edge counts and
    its vector indexes' matrices (O(number of indexes), cheap enough for every operation)."""
    rows = 0
    matrices = 0
    for index in (graph.event_vectors, graph.passage_vectors, graph.node_vectors,
                  *graph.kind_vectors.values()):
        rows += len(index)
        matrices += index.nbytes()
    return len(graph.nodes) * NODE_BYTES + graph.edge_total * EDGE_BYTES + matrices \
        + rows * ROW_BYTES


class NamespaceLock:
    """A namespace's re-entrant lock that enters ``enter()`` (the session's coherence
    check) when a thread first takes it and leaves it when that thread finally lets go (not
    on nested use)."""

    def __init__(self, ns: str, enter: Callable[[], AbstractContextManager[object]]) -> None:
        self.ns = ns
        self._lock = threading.RLock()
        self._depth = 0  # changed only by the thread holding the lock
        self._enter = enter
        self._open: AbstractContextManager[object] | None = None

    @property
    def depth(self) -> int:
        """How deep the holding thread is nested in the lock (read it holding the lock)."""
        return self._depth

    def __enter__(self) -> Self:
        self._lock.acquire()
        self._depth += 1
        if self._depth == 1:
            try:
                session = self._enter()
                session.__enter__()
                self._open = session
            except BaseException:
                self._depth -= 1
                self._lock.release()
                raise
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            if self._depth == 1 and self._open is not None:
                session, self._open = self._open, None
                session.__exit__(None, None, None)
        finally:
            self._depth -= 1
            self._lock.release()


class NamespaceSession:
    """One namespace's working graph, lock and change-token fence (see the module).

    ``vector_files``: where the namespace keeps its HNSW graphs (None: in RAM only);
    ``on_load(graph)`` runs after each load from the store (the memory restores the
    counters it keeps there). Use :attr:`lock` around everything done with :meth:`graph`.
    """

    def __init__(self, namespace: str, store: Store, *, ann: AnnOptions,
                 vector_files: Callable[[str], Path] | None,
                 on_load: Callable[[WorkingGraph], None] | None = None,
                 freeze_nodes: int = 0) -> None:
        self.namespace = namespace
        self.store = store
        self.ann = ann
        self.vector_files = vector_files
        self.on_load = on_load
        self.fence = Fence()  # the change token the working graph mirrors
        self.lock = NamespaceLock(namespace, self.coherent)
        self.pins = 0  # operations holding this session (under the cache's guard)
        self.size = 0  # estimate_bytes() when it was last handed back
        self.loads = 0
        self._graph: WorkingGraph | None = None
        #: From how many nodes the graph is settled out of the collector's full passes
        #: (:mod:`enfold.heap`; 0: never), and how many it had when it last was (0: not).
        self.freeze_nodes = freeze_nodes
        if freeze_nodes:
            heap.watch()
        self.settled_nodes = 0
        self._settled_epoch = -1

    @property
    def loaded(self) -> bool:
        return self._graph is not None

    def graph(self) -> WorkingGraph:
        """The working graph, loaded from the store on first use (hold :attr:`lock`)."""
        g = self._graph
        if g is None:
            from enfold.embed import limit_blas_threads

            limit_blas_threads()  # vector search is small products: see its docstring
            snap = self.store.load_graph(self.namespace)
            g = WorkingGraph(self.namespace, ann=self.ann, vector_files=self.vector_files)
            g.load(snap.nodes, snap.edges, snap.vectors, snap.aliases, snap.meta)
            self._graph = g
            self.fence.token = snap.token
            self.loads += 1
            if self.on_load is not None:
                self.on_load(g)
        return g

    @contextmanager
    def coherent(self) -> Iterator[None]:
        """Entered when a thread first takes the lock: a cached graph that missed another
        process's change is dropped, and the store fences every commit inside."""
        if not self.store.shared:
            yield
            return
        if self._graph is not None and self.store.change_token(self.namespace) \
                != self.fence.token:
            self.drop()
        with self.store.fenced(self.namespace, self.fence):
            yield

    def drop(self) -> None:
        """Let the working graph go (hold the lock): the next use reloads it. A graph kept
        out of the collector's full passes gives its objects back to it."""
        self._graph = None
        self.fence.token = None
        if self.settled_nodes:
            self.settled_nodes = 0
            heap.release()

    def settle(self) -> None:
        """Keep a large graph out of the collector's full passes (:mod:`enfold.heap`):
        once it has ``freeze_nodes`` nodes, again each time it has grown by half since or
        one of the collector's full passes was slow, and after another graph's release
        gave the frozen objects back (hold the lock)."""
        g = self._graph
        n = 0 if g is None else len(g.nodes)
        if not self.freeze_nodes or n < self.freeze_nodes:
            return
        if n >= 1.5 * self.settled_nodes or self._settled_epoch != heap.epoch() \
                or heap.due():  # the collector's own full pass was slow: settle its survivors
            done = heap.settle()
            if done is not None:
                self._settled_epoch = done
                self.settled_nodes = n

    def estimate(self) -> int:
        """The loaded graph's estimated size in bytes (0 when not loaded)."""
        return 0 if self._graph is None else estimate_bytes(self._graph)

    def save_vectors(self) -> None:
        """Write the changed HNSW graphs beside the store (hold the lock)."""
        g = self._graph
        if g is not None and g.vectors_unsaved():
            g.save_vectors({"token": list(self.store.change_token(self.namespace))})

    def release(self) -> None:
        """Evict: save the HNSW graphs, then let the working graph go (hold the lock). A
        file that cannot be written is only a cache: the next load rebuilds it."""
        try:
            self.save_vectors()
        finally:
            self.drop()

    def discard_vector_files(self) -> None:
        """Remove the namespace's HNSW files, loaded or not (after a wipe)."""
        if self.vector_files is not None:
            for name in VECTOR_FILES:
                self.vector_files(name).unlink(missing_ok=True)


@dataclass
class SessionStats:
    """What a :class:`SessionCache` did: sessions resident now and at most, their estimated
    bytes now and at most, loads from the store and evictions."""

    resident: int = 0
    peak_resident: int = 0
    estimated_bytes: int = 0
    peak_estimated_bytes: int = 0
    loads: int = 0
    evictions: int = 0


class SessionCache:
    """The sessions of one memory, least recently used first, within a budget.

    ``budget_bytes`` (0: none) bounds the estimated bytes of the loaded sessions,
    ``max_sessions`` (0: none) their number; ``make(namespace)`` creates a session.
    ``on_evict_error(namespace, exc)`` is told of an HNSW file that could not be written.
    """

    def __init__(self, make: Callable[[str], NamespaceSession], *, budget_bytes: int = 0,
                 max_sessions: int = 0,
                 on_evict_error: Callable[[str, BaseException], None] | None = None) -> None:
        self._make = make
        self.budget_bytes = budget_bytes
        self.max_sessions = max_sessions
        self._on_evict_error = on_evict_error
        self._sessions: OrderedDict[str, NamespaceSession] = OrderedDict()
        self._guard = threading.Lock()
        self._local = threading.local()  # sessions this thread holds (for nesting)
        self.stats = SessionStats()

    def __len__(self) -> int:
        return len(self._sessions)

    def resident(self) -> list[NamespaceSession]:
        """The sessions whose graphs are loaded, least recently used first."""
        with self._guard:
            return [s for s in self._sessions.values() if s.loaded]

    @contextmanager
    def using(self, namespace: str) -> Iterator[NamespaceSession]:
        """The namespace's session, pinned and its lock held, for the block."""
        session = self._checkout(namespace)
        try:
            with session.lock:
                try:
                    yield session
                finally:
                    if session.lock.depth == 1:  # this thread's outermost use
                        loads = session.loads
                        session.settle()
                        session.size = session.estimate()
                        session.loads = 0
                        with self._guard:
                            self.stats.loads += loads
        finally:
            self._checkin(session)

    def _checkout(self, namespace: str) -> NamespaceSession:
        with self._guard:
            session = self._sessions.get(namespace)
            if session is None:
                session = self._sessions[namespace] = self._make(namespace)
            else:
                self._sessions.move_to_end(namespace)
            session.pins += 1
        self._local.depth = getattr(self._local, "depth", 0) + 1
        return session

    def _checkin(self, session: NamespaceSession) -> None:
        self._local.depth -= 1
        with self._guard:
            session.pins -= 1
            if session.pins == 0 and not session.loaded \
                    and self._sessions.get(session.namespace) is session:
                del self._sessions[session.namespace]  # holds nothing: not worth keeping
            victims = self._victims() if self._local.depth == 0 else []
            for victim in victims:  # pinned by the evictor: nobody else evicts them
                victim.pins += 1
            self._note()
        if not victims:
            return
        # Evicted outside the guard (writing an HNSW file takes time) and holding no other
        # session's lock (depth 0), each under its own lock: a thread that asks for it
        # meanwhile waits, then finds it unloaded and reloads it.
        for victim in victims:
            try:
                with victim.lock:
                    with self._guard:  # taken meanwhile: it is in use again, keep it
                        busy = victim.pins > 1
                    if not busy:
                        victim.release()
            except Exception as exc:  # an unwritable file: a cache, rebuilt on next load
                if self._on_evict_error is None:
                    raise
                self._on_evict_error(victim.namespace, exc)
            finally:
                if not victim.loaded:
                    victim.size = 0
        with self._guard:
            for victim in victims:
                victim.pins -= 1
                self.stats.evictions += not victim.loaded
                if victim.pins == 0 and not victim.loaded \
                        and self._sessions.get(victim.namespace) is victim:
                    del self._sessions[victim.namespace]
            self._note()

    def _victims(self) -> list[NamespaceSession]:
        """The least recently used unpinned sessions to evict (under the guard): until the
        rest fit the budget and the count; never the most recently used one."""
        loaded = [s for s in self._sessions.values() if s.loaded]
        total = sum(s.size for s in loaded)
        count = len(loaded)
        over = (self.budget_bytes and total > self.budget_bytes) or \
            (self.max_sessions and count > self.max_sessions)
        if not over:
            return []
        out = []
        for session in loaded[:-1]:  # the most recent one always stays
            if not ((self.budget_bytes and total > self.budget_bytes)
                    or (self.max_sessions and count > self.max_sessions)):
                break
            if session.pins == 0 and session.loaded:
                out.append(session)
                total -= session.size
                count -= 1
        return out

    def _note(self) -> None:
        """Update the resident and estimated-bytes figures (under the guard)."""
        loaded = [s for s in self._sessions.values() if s.loaded]
        st = self.stats
        st.resident = len(loaded)
        st.estimated_bytes = sum(s.size for s in loaded)
        st.peak_resident = max(st.peak_resident, st.resident)
        st.peak_estimated_bytes = max(st.peak_estimated_bytes, st.estimated_bytes)
