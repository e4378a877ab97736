"""The in-memory working graph of one namespace, on which every algorithm runs.

The graph mirrors the store: it is loaded lazily, and every change made to it inside a
transaction (:meth:`WorkingGraph.begin`) is journalled, so that :meth:`commit` hands the
store exactly what changed (a :class:`~enfold.changeset.ChangeSet`) and :meth:`rollback`
restores the graph when the store write or a later operation fails. Both therefore move
together or not at all.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from enfold.ann import AnnOptions
from enfold.changeset import ChangeSet, EdgeKey
from enfold.model import Edge, EdgeType, Node, NodeKind, OpRecord
from enfold.vectors import EXACT, VectorIndex

_T = TypeVar("_T")
_SHORT_PROVENANCE = 32  # below this, WorkingGraph.grounded answers from the tuple
#: Between an event's id and its passage's number in a passage vector's key.
PASSAGE_SEP = "\x1f"
#: The names of the searched vector indexes' HNSW files (WorkingGraph.searched_indexes).
VECTOR_FILES = ("events", "passages", *(k.value for k in NodeKind))

__all__ = ["PASSAGE_SEP", "VECTOR_FILES", "ChangeSet", "EdgeKey", "Indexes", "WorkingGraph",
           "passage_key"]  # ChangeSet, EdgeKey: old home


def passage_key(event_id: str, n: int) -> str:
    """The key of an event's ``n``-th passage vector in ``WorkingGraph.passage_vectors``."""
    return f"{event_id}{PASSAGE_SEP}{n}"


def _best_per_event(found: Iterable[tuple[str, float]]) -> dict[str, float]:
    """Each event's best cosine among passage keys and their cosines."""
    best: dict[str, float] = {}
    for key, sim in found:
        e = key.partition(PASSAGE_SEP)[0]
        if sim > best.get(e, -2.0):
            best[e] = sim
    return best


class Indexes:
    """The derived, unpersisted structures kept beside one graph (indexes, caches, algorithm
    state such as the local planner's term statistics), one per type: the type is the key,
    so a reader gets what it asked for or nothing, never another module's value by name."""

    def __init__(self) -> None:
        self._by_type: dict[type, object] = {}

    def get(self, kind: type[_T]) -> _T | None:
        found = self._by_type.get(kind)
        return found if isinstance(found, kind) else None

    def of(self, kind: type[_T], make: Callable[[], _T]) -> _T:
        """The ``kind`` kept here, made by ``make`` on first use — which is when a
        listener-kept one registers."""
        found = self._by_type.get(kind)
        if not isinstance(found, kind):
            found = make()
            self._by_type[kind] = found
        return found

    def put(self, value: _T) -> _T:
        """Keep ``value`` as its type's structure (replacing the one kept)."""
        self._by_type[type(value)] = value
        return value


class WorkingGraph:
    """Nodes, typed edges (indexed both ways), vectors and merge aliases of one namespace.

    ``ann``: how the searched vector indexes (events, and each derived kind) search once
    large (:class:`~enfold.ann.AnnOptions`; default: HNSW from 20,000 rows).
    ``vector_files``: where those indexes keep their HNSW graphs between runs — called with
    an index's name (``"events"``, ``"concept"``…) it gives the file's path; None keeps
    them in memory only, built from the store's vectors at :meth:`load`.
    """

    def __init__(self, namespace: str, *, ann: AnnOptions | None = None,
                 vector_files: Callable[[str], Path] | None = None) -> None:
        self.namespace = namespace
        self.ann = AnnOptions() if ann is None else ann
        self.vector_files = vector_files
        self.nodes: dict[str, Node] = {}
        self.out: dict[str, dict[tuple[EdgeType, str], Edge]] = {}
        self.inn: dict[str, dict[tuple[EdgeType, str], Edge]] = {}
        # The edges between two non-event nodes, under both endpoints: a concept's links to
        # other concepts, intents, people… without walking the thousands of events that
        # ground it (see :meth:`links`).
        self.derived: dict[str, dict[EdgeType, dict[EdgeKey, Edge]]] = {}
        self.by_kind: dict[NodeKind, dict[str, None]] = {k: {} for k in NodeKind}
        self.events_by_seq: dict[int, str] = {}  # an event's log sequence number -> its id
        # Bumped whenever an event comes or goes or its sequence number or time changes
        # (not when only its access statistics do): what derives from the events' order
        # alone (recall's neighbouring turns) is good while it stays.
        self.events_epoch = 0
        self.event_vectors = VectorIndex(ann=self.ann)
        # A long event's passages, one row each, keyed "<event id>\x1f<n>"
        # (enfold.text.passages); passage_count holds how many an event has.
        self.passage_vectors = VectorIndex(ann=self.ann)
        self.passage_count: dict[str, int] = {}
        self.node_vectors = VectorIndex(ann=EXACT)  # never searched: read by id only
        # The same derived-node vectors split by kind: "the nearest concepts" among a
        # hundredfold more facts and claims is a search over the concepts alone.
        self.kind_vectors: dict[NodeKind, VectorIndex] = {}
        self.aliases: dict[str, str] = {}
        self.meta: dict[str, Any] = {}
        self.edge_total = 0  # edges held (what edge_count() counts), kept as they change
        self.version = 0  # bumped on every committed change; caches key on it
        self.indexes = Indexes()  # derived, unpersisted algorithm state, one per type
        self.vector_load: dict[str, str] = {}  # index name -> how load() got its HNSW graph
        self._journal: list[tuple[str, Any, Any]] | None = None
        # node id -> (the provenance tuple last seen, the set of its ids); see grounded().
        self._grounded: dict[str, tuple[tuple[str, ...], set[str]]] = {}
        self._changes: ChangeSet | None = None
        # Called as f(key, edge or None) on every edge change, rollbacks included, so that
        # incremental structures (PageRank) stay in step without rescanning the graph.
        self.edge_listeners: list[Callable[[EdgeKey, Edge | None], None]] = []
        # Called as f(node id, node before, node after) on every node change, the same way.
        self.node_listeners: list[Callable[[str, Node | None, Node | None], None]] = []

    # ----------------------------------------------------------------- reading
    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nodes

    def get(self, node_id: str) -> Node | None:
        return self.nodes.get(self.resolve(node_id))

    def resolve(self, node_id: str) -> str:
        """Follow merge aliases: an absorbed id keeps resolving to its survivor."""
        seen = 0
        while node_id in self.aliases and seen < 64:
            node_id = self.aliases[node_id]
            seen += 1
        return node_id

    def grounded(self, node_id: str) -> Container[str]:
        """The ids in a node's ``grounded_in``, for membership tests (empty for an unknown
        node).

        A habit or a large concept is grounded in thousands of events and gains one at a
        time: for a long provenance a set is kept per node and extended by what was
        appended since it was last asked for, so testing "is this event already evidence?"
        does not scan the tuple. A short provenance is answered by the tuple itself (no
        per-node set for the many claims and facts with a few events). Read it at once; it
        changes with the node.
        """
        node = self.nodes.get(node_id)
        if node is None:
            return ()
        prov = node.grounded_in
        if len(prov) < _SHORT_PROVENANCE:
            return prov
        hit = self._grounded.get(node_id)
        if hit is not None:
            seen, ids = hit
            if seen is prov:
                return ids
            if len(prov) >= len(seen) and prov[:len(seen)] == seen:
                ids.update(prov[len(seen):])
                self._grounded[node_id] = (prov, ids)
                return ids
        ids = set(prov)
        self._grounded[node_id] = (prov, ids)
        return ids

    def of_kind(self, kind: NodeKind) -> Iterable[str]:
        return self.by_kind[kind].keys()

    def count(self, kind: NodeKind) -> int:
        return len(self.by_kind[kind])

    def edge(self, src: str, type_: EdgeType, dst: str) -> Edge | None:
        return self.out.get(src, {}).get((type_, dst))

    def out_edges(self, node_id: str) -> Iterable[Edge]:
        return self.out.get(node_id, {}).values()

    def in_edges(self, node_id: str) -> Iterable[Edge]:
        return self.inn.get(node_id, {}).values()

    def edges_of(self, node_id: str) -> Iterator[Edge]:
        yield from self.out_edges(node_id)
        yield from self.in_edges(node_id)

    def degree(self, node_id: str) -> int:
        return len(self.out.get(node_id, {})) + len(self.inn.get(node_id, {}))

    def links(self, node_id: str, types: Iterable[EdgeType] | None = None
              ) -> Iterator[tuple[str, Edge]]:
        """Like :meth:`neighbors`, without events: the edges (of ``types``, default all)
        between ``node_id`` and other non-event nodes. Its cost follows those edges, not
        the node's degree."""
        by_type = self.derived.get(node_id, {})
        for t in by_type if types is None else types:
            for e in by_type.get(t, {}).values():
                yield (e.dst if e.src == node_id else e.src), e

    def all_edges(self) -> Iterator[Edge]:
        for edges in self.out.values():
            yield from edges.values()

    def edge_count(self) -> int:
        return sum(len(e) for e in self.out.values())

    def neighbors(self, node_id: str) -> Iterator[tuple[str, Edge]]:
        for e in self.out_edges(node_id):
            yield e.dst, e
        for e in self.in_edges(node_id):
            yield e.src, e

    def event_centroid(self, event_ids: Iterable[str]) -> np.ndarray | None:
        """The normalized mean embedding of the given events (None if none has a vector)."""
        vecs = [v for v in (self.event_vectors.get(e) for e in event_ids) if v is not None]
        if not vecs:
            return None
        c = np.mean(np.stack(vecs), axis=0)
        n = float(np.linalg.norm(c))
        return c / n if n > 0 else None

    def nearest(self, vec: np.ndarray, kind: NodeKind, k: int,
                accept: Callable[[str], bool] | None = None, *, last: int | None = None
                ) -> list[tuple[str, float]]:
        """The ``k`` nodes of ``kind`` (not events) nearest to ``vec`` by cosine; with
        ``last``, among the ``last`` of that kind whose vectors were added most recently."""
        index = self.kind_vectors.get(kind)
        return [] if index is None else index.search(vec, k, accept=accept, last=last)

    def vector(self, node_id: str) -> np.ndarray | None:
        v = self.event_vectors.get(node_id)
        return v if v is not None else self.node_vectors.get(node_id)

    def vector_row(self, node_id: str) -> np.ndarray | None:
        """What the store holds for a node's vector: an event with passages gets a matrix
        (its vector, then one row per passage), any other node its vector."""
        v = self.vector(node_id)
        n = self.passage_count.get(node_id, 0)
        if v is None or not n:
            return v
        rows = [self.passage_vectors.get(passage_key(node_id, i)) for i in range(n)]
        return np.vstack([v[None, :], *(r[None, :] for r in rows if r is not None)])

    def passage_similarities(self, query: np.ndarray, event_ids: Iterable[str]
                             ) -> dict[str, float]:
        """For each of ``event_ids`` with passages, the best cosine of its passages to
        ``query``."""
        keys = [passage_key(e, i) for e in event_ids
                for i in range(self.passage_count.get(e, 0))]
        if not keys:
            return {}
        return _best_per_event(self.passage_vectors.similarities(query, keys).items())

    def nearest_passages(self, query: np.ndarray, k: int) -> dict[str, float]:
        """The events of the ``k`` passages nearest to ``query``, each with its best."""
        return _best_per_event(self.passage_vectors.search(query, k))

    # -------------------------------------------------------------- journalling
    def begin(self) -> None:
        if self._journal is not None:
            raise RuntimeError("working graph transaction already open")
        self._journal = []
        self._changes = ChangeSet()

    @property
    def in_transaction(self) -> bool:
        return self._journal is not None

    def changes(self) -> ChangeSet:
        if self._changes is None:
            raise RuntimeError("no open transaction")
        return self._changes

    def commit(self) -> ChangeSet:
        changes = self.changes()
        self._journal = None
        self._changes = None
        self.version += 1
        return changes

    def rollback(self) -> None:
        journal = self._journal or []
        self._journal = None
        self._changes = None
        for what, key, before in reversed(journal):
            if what == "node":
                self._set_node(key, before)
            elif what == "edge":
                self._set_edge(key, before)
            elif what == "vector":
                self._set_vector(key, before)
            elif what == "alias":
                if before is None:
                    self.aliases.pop(key, None)
                else:
                    self.aliases[key] = before
            elif what == "meta":
                if before is None:
                    self.meta.pop(key, None)
                else:
                    self.meta[key] = before

    # ------------------------------------------------------------------ writing
    def put_node(self, node: Node, *, persist: bool = True) -> None:
        """Add or replace a node; ``persist=False`` for one the store already holds."""
        before = self.nodes.get(node.id)
        self._record("node", node.id, before)
        self._set_node(node.id, node)
        if persist:
            changes = self.changes()
            changes.nodes[node.id] = node
            changes.before.setdefault(node.id, before)

    def remove_node(self, node_id: str) -> None:
        """Remove a node with all its edges and its vector."""
        for e in list(self.edges_of(node_id)):
            self.remove_edge(e.key)
        if self.vector(node_id) is not None:
            self.set_vector(node_id, None)
        before = self.nodes.get(node_id)
        self._record("node", node_id, before)
        self._set_node(node_id, None)
        changes = self.changes()
        changes.nodes[node_id] = None
        changes.before.setdefault(node_id, before)

    def put_edge(self, edge: Edge) -> None:
        self._record("edge", edge.key, self.edge(*edge.key))
        self._set_edge(edge.key, edge)
        self.changes().edges[edge.key] = edge

    def remove_edge(self, key: EdgeKey) -> None:
        self._record("edge", key, self.edge(*key))
        self._set_edge(key, None)
        self.changes().edges[key] = None

    def set_vector(self, node_id: str, vec: np.ndarray | None) -> None:
        """Set (None: remove) a node's vector; an event's may be a matrix, its whole
        text's vector first and then one row per passage."""
        before = self.vector_row(node_id)
        self._record("vector", node_id, None if before is None else before.copy())
        self._set_vector(node_id, vec)
        self.changes().vectors[node_id] = vec

    def set_alias(self, old: str, new: str) -> None:
        self._record("alias", old, self.aliases.get(old))
        self.aliases[old] = new
        self.changes().aliases[old] = new

    def set_meta(self, key: str, value: Any) -> None:
        self._record("meta", key, self.meta.get(key))
        self.meta[key] = value
        self.changes().meta[key] = value

    def add_op(self, op: OpRecord) -> None:
        self.changes().ops.append(op)

    def _record(self, what: str, key: Any, before: Any) -> None:
        if self._journal is None:
            raise RuntimeError("working graph changed outside a transaction")
        self._journal.append((what, key, before))

    # ------------------------------------------------- raw setters (no journal)
    def _set_node(self, node_id: str, node: Node | None) -> None:
        old = self.nodes.get(node_id)
        if old is not None and (node is None or node.kind != old.kind):
            self.by_kind[old.kind].pop(node_id, None)
        if ((old is not None and old.kind is NodeKind.EVENT)
                or (node is not None and node.kind is NodeKind.EVENT)) and (
                old is None or node is None or old.kind is not node.kind
                or old.attrs.get("seq") != node.attrs.get("seq") or old.ts != node.ts):
            self.events_epoch += 1
        if old is not None and old.kind is NodeKind.EVENT:
            seq = old.attrs.get("seq")
            if seq is not None and self.events_by_seq.get(int(seq)) == node_id:
                del self.events_by_seq[int(seq)]
        if node is not None and node.kind is NodeKind.EVENT:
            self.events_by_seq[int(node.attrs.get("seq", 0))] = node_id
        if node is None:
            self.nodes.pop(node_id, None)
            self._grounded.pop(node_id, None)
        else:
            self.nodes[node_id] = node
            self.by_kind[node.kind][node_id] = None
        for listener in self.node_listeners:
            listener(node_id, old, node)

    def _set_edge(self, key: EdgeKey, edge: Edge | None) -> None:
        src, type_, dst = key
        if edge is None:
            out = self.out.get(src)
            if out is not None:
                if out.pop((type_, dst), None) is not None:
                    self.edge_total -= 1
                if not out:
                    del self.out[src]
            inn = self.inn.get(dst)
            if inn is not None:
                inn.pop((type_, src), None)
                if not inn:
                    del self.inn[dst]
        else:
            bucket = self.out.setdefault(src, {})
            if (type_, dst) not in bucket:
                self.edge_total += 1
            bucket[(type_, dst)] = edge
            self.inn.setdefault(dst, {})[(type_, src)] = edge
        if not (self._is_event(src) or self._is_event(dst)):
            for end in (src, dst):
                if edge is None:
                    by_type = self.derived.get(end)
                    links = None if by_type is None else by_type.get(type_)
                    if by_type is not None and links is not None:
                        links.pop(key, None)
                        if not links:
                            del by_type[type_]
                            if not by_type:
                                del self.derived[end]
                else:
                    self.derived.setdefault(end, {}).setdefault(type_, {})[key] = edge
        for listener in self.edge_listeners:
            listener(key, edge)

    def _is_event(self, node_id: str) -> bool:
        node = self.nodes.get(node_id)
        return (node is not None and node.kind is NodeKind.EVENT) or node_id.startswith("ev_")

    def _set_passages(self, node_id: str, rows: np.ndarray | None) -> None:
        """Replace an event's passage vectors with ``rows`` (None or none: it has none)."""
        for i in range(self.passage_count.pop(node_id, 0)):
            key = passage_key(node_id, i)
            self._forget_file("passages", self.passage_vectors, key)
            self.passage_vectors.remove(key)
        if rows is not None and len(rows):
            self.passage_vectors.put_many(self._passage_items(node_id, rows))

    def _passage_items(self, node_id: str, rows: np.ndarray) -> list[tuple[str, np.ndarray]]:
        """An event's passage rows keyed for :attr:`passage_vectors` (counted as its)."""
        self.passage_count[node_id] = len(rows)
        return [(passage_key(node_id, i), r) for i, r in enumerate(rows)]

    def _set_vector(self, node_id: str, vec: np.ndarray | None) -> None:
        if self._is_event(node_id):
            if self.passage_count.get(node_id) or (vec is not None and vec.ndim == 2):
                self._set_passages(node_id, None if vec is None or vec.ndim == 1 else vec[1:])
            if vec is not None and vec.ndim == 2:
                vec = vec[0]
            if vec is None:
                self._forget_file("events", self.event_vectors, node_id)
                self.event_vectors.remove(node_id)
            else:
                self._forget_file("events", self.event_vectors, node_id)  # if replaced
                self.event_vectors.put(node_id, vec)
            return
        node = self.nodes.get(node_id)
        if vec is None:
            self.node_vectors.remove(node_id)
            for kind, index in self.kind_vectors.items():
                self._forget_file(kind.value, index, node_id)
                index.remove(node_id)
            return
        self.node_vectors.put(node_id, vec)
        if node is not None:  # (a node's vector is set after the node itself)
            index = self._kind_index(node.kind)
            self._forget_file(node.kind.value, index, node_id)  # if replaced
            index.put(node_id, vec)

    def _forget_file(self, name: str, index: VectorIndex, node_id: str) -> None:
        """A vector leaves (or is replaced in) a file-backed index: its file goes now (it is
        written again by :meth:`save_vectors`), so a crash never leaves a forgotten vector
        on disk."""
        if self.vector_files is not None and index.approximate and node_id in index:
            self.vector_files(name).unlink(missing_ok=True)

    def _kind_index(self, kind: NodeKind) -> VectorIndex:
        index = self.kind_vectors.get(kind)
        if index is None:
            index = self.kind_vectors[kind] = VectorIndex(ann=self.ann)
        return index

    def searched_indexes(self) -> dict[str, VectorIndex]:
        """The vector indexes that are searched, by the name their file takes."""
        return {"events": self.event_vectors, "passages": self.passage_vectors,
                **{kind.value: index for kind, index in self.kind_vectors.items()}}

    def vectors_unsaved(self) -> bool:
        """Whether :meth:`save_vectors` has anything to write (or a stale file to remove)."""
        if self.vector_files is None:
            return False
        return any((index.approximate and index.changed)
                   or (not index.approximate and self.vector_files(name).exists())
                   for name, index in self.searched_indexes().items())

    def save_vectors(self, header: dict[str, Any] | None = None) -> list[str]:
        """Write the HNSW graphs that changed since they were loaded or last saved to
        their :attr:`vector_files` (an index below the threshold removes its file).
        Returns the names written."""
        if self.vector_files is None:
            return []
        written = []
        for name, index in self.searched_indexes().items():
            path = self.vector_files(name)
            stale = (index.approximate and index.changed) or \
                (not index.approximate and path.exists())
            if stale and index.save(path, header):
                written.append(name)
        return written

    def discard_vector_files(self) -> None:
        """Remove this namespace's HNSW files (after a wipe)."""
        if self.vector_files is not None:
            for name in VECTOR_FILES:
                self.vector_files(name).unlink(missing_ok=True)

    # --------------------------------------------------------------- loading
    def load(
        self,
        nodes: Iterable[Node],
        edges: Iterable[Edge],
        vectors: Iterable[tuple[str, np.ndarray]],
        aliases: Iterable[tuple[str, str]],
        meta: Iterable[tuple[str, Any]] = (),
    ) -> None:
        """Fill the graph from the store (no journal: this is the committed state)."""
        for n in nodes:
            self._set_node(n.id, n)
        for e in edges:
            self._set_edge(e.key, e)
        # Vectors in bulk, one batch per index; each searched index then restores its HNSW
        # graph from its file, or builds it, once (not row by row as it crosses the
        # threshold).
        events: list[tuple[str, np.ndarray]] = []
        passages: list[tuple[str, np.ndarray]] = []
        derived: dict[NodeKind | None, list[tuple[str, np.ndarray]]] = {}
        for node_id, vec in vectors:
            if self._is_event(node_id):
                if vec.ndim == 2:
                    if len(vec) > 1:
                        passages.extend(self._passage_items(node_id, vec[1:]))
                    vec = vec[0]
                events.append((node_id, vec))
            else:
                node = self.nodes.get(node_id)
                derived.setdefault(None if node is None else node.kind, []).append(
                    (node_id, vec))
        indexes = [self.event_vectors, self.passage_vectors,
                   *(self._kind_index(k) for k in derived if k)]
        for index in indexes:
            index.begin_load()
        self.event_vectors.put_many(events)
        self.passage_vectors.put_many(passages)
        for kind, items in derived.items():
            self.node_vectors.put_many(items)
            if kind is not None:
                self._kind_index(kind).put_many(items)
        files = self.vector_files
        self.vector_load = {
            name: index.end_load(None if files is None else files(name))
            for name, index in self.searched_indexes().items()}
        self.aliases.update(aliases)
        self.meta.update(meta)
