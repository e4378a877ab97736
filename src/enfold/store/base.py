"""The storage seam: one small protocol, one module per backend.

SQL lives only in the backend modules; they translate driver errors into
:class:`enfold.errors.StoreError`. A backend persists the event log (the source of truth),
the graph (nodes, edges, vectors, merge aliases), the op log, per-namespace folding cursors
and metadata, and an embedding cache keyed by content hash.

Several writers (processes, or store objects in one process) may share a namespace. Each
namespace has a **change token**: (version, folding cursor), where the version goes up by
one with every commit that writes something. A working graph remembers the token it was
loaded at (:attr:`GraphSnapshot.token`); commits made inside :meth:`Store.fenced` check it
in their own transaction and advance it, and a commit whose token is no longer the store's
raises :class:`~enfold.errors.StaleGraph` instead of overwriting what another writer did.
Access statistics are the exception: :meth:`Store.touch` adds to them in place, unfenced,
and a commit never lowers them.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from enfold.changeset import ChangeSet
from enfold.errors import StaleGraph
from enfold.model import Edge, Node, NodeKind, OpRecord

#: The meta key of a namespace that names the vector space of its vectors:
#: ``{"name": embedder name, "dim": size}``, written by the store with the namespace's first
#: vectors. It is the store's, not the graph's: ``load_graph`` leaves it out of ``meta``.
EMBEDDER_KEY = "embedder"


@dataclass(frozen=True)
class EventRecord:
    """An event to append: its node (kind event) and its idempotency keys."""

    node: Node
    content_hash: str
    external_id: str | None
    seq: int | None = None  # only imports restore a given sequence number


@dataclass(frozen=True)
class Appended:
    """The outcome of one append: the event id and whether it was new."""

    id: str
    seq: int
    created: bool


#: A namespace's change token: (version, folding cursor). The version counts the commits
#: that wrote something; the cursor is there too because a namespace wipe resets it.
Token = tuple[int, int]


@dataclass(frozen=True)
class GraphSnapshot:
    nodes: list[Node]
    edges: list[Edge]
    vectors: list[tuple[str, np.ndarray]]
    aliases: list[tuple[str, str]]
    meta: list[tuple[str, Any]]
    token: Token = (0, 0)  # the namespace's change token, read in the same snapshot


@dataclass
class Fence:
    """The change token a working graph mirrors (None: no graph loaded, nothing to check).

    A store advances ``token`` after each fenced commit, so the holder's graph and the
    fence stay in step; whoever drops the graph sets it back to None."""

    token: Token | None = None


class Fences:
    """Which :class:`Fence` applies to this thread's commits, per namespace, and the moves
    of fences that wait for their transaction (the backends' shared bookkeeping for
    :meth:`Store.fenced`). A fenced commit inside a caller's transaction moves its fence
    only when that transaction commits; one rolled back (by the caller) moves nothing."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _held(self) -> dict[str, Fence]:
        held: dict[str, Fence] | None = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = {}
        return held

    def _moves(self) -> list[tuple[Fence, Token]]:
        moves: list[tuple[Fence, Token]] | None = getattr(self._local, "moves", None)
        if moves is None:
            moves = self._local.moves = []
        return moves

    def expected(self, fence: Fence | None) -> Token | None:
        """The token a commit under ``fence`` must find (counting this transaction's own
        commits); None: not checked."""
        if fence is None:
            return None
        for f, token in reversed(self._moves()):
            if f is fence:
                return token
        return fence.token

    def advance(self, fence: Fence, token: Token) -> None:
        """Move ``fence`` to ``token`` once the current transaction commits."""
        self._moves().append((fence, token))

    def mark(self) -> int:
        """Where a transaction or savepoint starts (see :meth:`discard`)."""
        return len(self._moves())

    def discard(self, mark: int) -> None:
        """A transaction or savepoint started at ``mark`` rolled back."""
        del self._moves()[mark:]

    def settle(self) -> None:
        """The outermost transaction committed: its fences move."""
        moves = self._moves()
        for fence, token in moves:
            fence.token = token
        moves.clear()

    @contextmanager
    def hold(self, namespace: str, fence: Fence) -> Iterator[Fence]:
        held = self._held()
        before = held.get(namespace)
        held[namespace] = fence
        try:
            yield fence
        finally:
            if before is None:
                held.pop(namespace, None)
            else:
                held[namespace] = before

    def get(self, namespace: str) -> Fence | None:
        return self._held().get(namespace)


@dataclass(frozen=True)
class ApiKey:
    """An HTTP API key of one namespace, as stored: the SHA-256 of its secret, never the
    secret itself."""

    id: str
    namespace: str
    key_hash: str
    label: str | None
    created_at: float
    revoked_at: float | None = None


#: The per-namespace tables every backend keeps, with their columns in a canonical order:
#: what ``enfold migrate`` copies row for row and checksums (leases are transient, not
#: copied; ``api_keys`` rows carry their namespace too).
TABLES: dict[str, tuple[str, ...]] = {
    "events": ("namespace", "seq", "id", "content_hash", "external_id"),
    "nodes": ("namespace", "id", "kind", "text", "attrs", "created_at", "updated_at",
              "last_access", "access_count", "plan_id"),
    "provenance": ("namespace", "node_id", "pos", "event_id"),
    "edges": ("namespace", "src", "type", "dst", "weight", "created_at", "updated_at",
              "plan_id"),
    "vectors": ("namespace", "node_id", "dim", "dtype", "data"),
    "aliases": ("namespace", "old_id", "new_id"),
    "oplog": ("namespace", "seq", "plan_id", "op", "target", "before", "after", "reasoning",
              "at", "peer"),
    "cursors": ("namespace", "seq"),
    "meta": ("namespace", "key", "value"),
    "embed_cache": ("namespace", "model", "hash", "data"),
    "api_keys": ("id", "namespace", "key_hash", "label", "created_at", "revoked_at"),
}


class Store(Protocol):
    """What enfold needs from a storage backend. Every method is namespace-scoped."""

    url: str
    shared: bool  # whether other processes can write to it (an in-memory store cannot)
    # The embedder of the vectors this process commits (set by Memory; None: unknown). A
    # commit that writes a namespace's first vectors records it (meta EMBEDDER_KEY).
    embedder_name: str | None

    def close(self) -> None: ...

    def sidecar(self, namespace: str, name: str) -> Path | None:
        """Where a namespace may keep a file of data derived from the store (an HNSW graph
        of its vectors, named ``name``) beside it; None if the store has no such place."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """Make the store calls inside one atomic transaction."""
        ...

    # event log
    def append_events(self, namespace: str, events: Sequence[EventRecord]) -> list[Appended]:
        """Durably append events in one transaction; known ones return their existing id."""
        ...

    def events_after(self, namespace: str, seq: int, limit: int) -> list[Node]:
        """Events with sequence number > seq, in order (``attrs["seq"]`` is set)."""
        ...

    def events_by_time(self, namespace: str, *, since: float | None = None,
                       until: float | None = None, after: tuple[float, int] | None = None,
                       limit: int = 100) -> list[Node]:
        """Events with ``since <= ts < until`` (a None bound is open), folded or not, ordered
        by time and then by log order, starting strictly after the ``(ts, seq)`` position
        ``after`` (a page's last event: a stable cursor); at most ``limit`` of them."""
        ...

    def last_seq(self, namespace: str) -> int: ...

    def get_cursor(self, namespace: str) -> int: ...

    def change_token(self, namespace: str) -> Token:
        """The namespace's :data:`Token`: changes whenever any writer folds, consolidates,
        edits or wipes the namespace's graph (not when events are only appended, nor on
        :meth:`touch`), so a process can tell that its working graph went stale."""
        ...

    # graph
    def load_graph(self, namespace: str, *, folded_only: bool = True) -> GraphSnapshot:
        """The namespace's graph as one consistent snapshot, with its change token."""
        ...

    def commit(self, namespace: str, changes: ChangeSet, *, cursor: int | None = None,
               durable: bool = True) -> None:
        """Persist a change set (and optionally advance the folding cursor) atomically.

        Inside :meth:`fenced`, the commit first checks that the namespace's change token is
        still the fence's and raises :class:`~enfold.errors.StaleGraph` (writing nothing)
        if it is not; then it writes and moves the fence to the new token. A commit that
        writes nothing neither checks nor changes the token.

        ``durable=False`` is for derived state that the event log can rebuild (folding,
        consolidation passes): the write is atomic and survives the process, but a power
        failure or OS crash may undo it, together with every write after it and none
        before it. The cursor goes back with it, and those events fold again. Appends
        to the event log are always durable: an acknowledged event is never lost.
        """
        ...

    def fenced(self, namespace: str, fence: Fence) -> AbstractContextManager[Fence]:
        """Check and advance ``fence`` with every commit this thread makes to ``namespace``
        inside the block (optimistic concurrency for a working graph loaded at
        ``fence.token``; a ``None`` token is not checked)."""
        ...

    def touch(self, namespace: str, node_ids: Sequence[str], at: float) -> None:
        """Count one access to each node, at ``at``: increments in place (``access_count +
        1``, ``last_access`` the later of the two), so concurrent readers never write a
        stale copy of a node back. Unfenced; not durable (access statistics may lose their
        last increments to a power failure)."""
        ...

    def get_node(self, namespace: str, node_id: str) -> Node | None: ...

    def resolve_alias(self, namespace: str, node_id: str) -> str | None: ...

    def history(self, namespace: str, node_id: str) -> list[OpRecord]: ...

    def oplog(self, namespace: str) -> list[OpRecord]:
        """The namespace's whole op log in sequence order (export writes it)."""
        ...

    def search_text(
        self, namespace: str, query: str, kinds: Iterable[NodeKind] | None, limit: int,
        *, max_rows: int | None = None,
    ) -> list[tuple[str, float]]:
        """Lexical search over node text; higher score is better. ``max_rows``: about how
        many index rows a backend that can bound its work scores at most (the commonest
        words of the query are left out first); None scores every matching row."""
        ...

    def word_weights(self, namespace: str, words: Iterable[str]) -> dict[str, float]:
        """Each (lowercase) word's weight in :meth:`search_text`'s ranking: its inverse
        document frequency as BM25 has it (a word few nodes hold weighs most); 0 for a word
        the backend never matches (a stop word)."""
        ...

    # namespaces
    def namespaces(self) -> list[str]: ...

    def counts(self, namespace: str) -> dict[str, Any]: ...

    def wipe(self, namespace: str) -> None: ...

    def get_meta(self, namespace: str, key: str) -> Any: ...

    def vector_spaces(self) -> dict[str, tuple[str | None, int]]:
        """For each namespace holding vectors: the embedder recorded for them (None when
        they predate the record) and their size."""
        ...

    # forgetting (an event, what derives from it, and its words in the op log)
    def event_words(self, namespace: str, words: Iterable[str], *, exclude: str
                    ) -> set[str]:
        """Which of ``words`` (lowercase) the text of an event other than ``exclude``
        holds as a whole word."""
        ...

    def history_matching(self, namespace: str, node_ids: Iterable[str],
                         probes: Sequence[str]) -> list[OpRecord]:
        """The op-log records of these nodes (as target or peer) whose payload contains
        one of ``probes`` (lowercase; ASCII compared without case): a superset, oldest
        first."""
        ...

    def redact_ops(self, namespace: str, records: Sequence[OpRecord]) -> None:
        """Rewrite the payload (before, after, reasoning) of these op records, by seq."""
        ...

    def drop_aliases(self, namespace: str, old_ids: Iterable[str]) -> None: ...

    def cache_models(self, namespace: str) -> list[str]:
        """The embedders that have vectors in the namespace's embedding cache."""
        ...

    def erase_deleted(self) -> bool:
        """Erase deleted content from the store's files as far as the backend can (outside
        any transaction); true when the files no longer hold it."""
        ...

    # embedding cache
    def cached_vectors(
        self, namespace: str, model: str, hashes: Sequence[str]
    ) -> dict[str, np.ndarray]: ...

    def cache_vectors(
        self, namespace: str, model: str, items: Sequence[tuple[str, np.ndarray]]
    ) -> None:
        """Remember embeddings by content hash; a cache, so not durable (see ``commit``)."""
        ...

    # namespace leases (one writer per namespace across processes: enfold.lease)
    def try_lease(self, namespace: str, owner: str, ttl_s: float) -> bool:
        """Acquire or renew the namespace's lease for ``ttl_s`` seconds; true if ``owner``
        holds it now (an expired lease of another owner is taken over)."""
        ...

    def release_lease(self, namespace: str, owner: str) -> None:
        """Give the lease up (a no-op unless ``owner`` holds it)."""
        ...

    def lease_owner(self, namespace: str) -> str | None:
        """Who holds the namespace's lease now (None: nobody, or it expired)."""
        ...

    def take_over_lease(self, namespace: str, owner: str, ttl_s: float, previous: str) -> bool:
        """Take the lease from ``previous`` (a holder known to be dead) before it expires;
        false when someone else holds it by now."""
        ...


@runtime_checkable
class KeyStore(Protocol):
    """API-key storage for the HTTP server (a backend may lack it: the server then needs
    ``--no-auth`` or the admin key alone)."""

    def create_api_key(self, key: ApiKey) -> None: ...

    def get_api_key(self, key_id: str) -> ApiKey | None: ...

    def list_api_keys(self, namespace: str | None = None) -> list[ApiKey]: ...

    def revoke_api_key(self, key_id: str, at: float) -> bool:
        """Mark a key revoked; false if there is no such key (or it was revoked already)."""
        ...


class RowStore(Protocol):
    """Raw row access for store-to-store copies (``enfold.store.migrate``)."""

    url: str

    def dump_rows(self, table: str, namespace: str) -> list[tuple[Any, ...]]:
        """A namespace's rows of one of :data:`TABLES`, in its column order."""
        ...

    def load_rows(self, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert rows as ``dump_rows`` returned them (derived indexes follow)."""
        ...

    def namespaces(self) -> list[str]: ...

    def transaction(self) -> AbstractContextManager[None]: ...


def check_fence(namespace: str, expected: Token | None, token: Token) -> None:
    """Refuse a commit from a working graph loaded at another token than the store's."""
    if expected is not None and expected != token:
        raise StaleGraph(f"namespace {namespace!r} was changed by another writer since its "
                         f"working graph was loaded (change token {expected}, now {token})")


def fts_text(node: Node) -> str:
    """What lexical search sees of a node: its text plus aliases, summary and keywords."""
    parts = [node.text]
    for key in ("aliases", "keywords"):
        value = node.attrs.get(key)
        if isinstance(value, list):
            parts.extend(str(v) for v in value)
    summary = node.attrs.get("summary")
    if isinstance(summary, str):
        parts.append(summary)
    return " ".join(parts)


_WORD = re.compile(r"\w+", re.UNICODE)


def words(text: str) -> list[str]:
    """The distinct lowercase words of a text, in order: the words a lexical search of it
    looks for (SQLite's search takes the first 64, :func:`enfold.store.sqlite.query_words`)
    and recall weighs for its ``cover`` feature (:mod:`enfold.text.terms`)."""
    return list(dict.fromkeys(_WORD.findall(text.lower())))
