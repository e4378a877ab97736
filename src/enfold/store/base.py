"""The storage seam: one small protocol, one module per backend.

SQL lives only in the backend modules; they translate driver errors into
:class:`enfold.errors.StoreError`. A backend persists the event log (the source of truth),
the graph (nodes, edges, vectors, merge aliases), the op log, per-namespace folding cursors
and metadata, and an embedding cache keyed by content hash.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np

from enfold.graph import ChangeSet
from enfold.model import Edge, Node, NodeKind, OpRecord


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


@dataclass(frozen=True)
class GraphSnapshot:
    nodes: list[Node]
    edges: list[Edge]
    vectors: list[tuple[str, np.ndarray]]
    aliases: list[tuple[str, str]]
    meta: list[tuple[str, Any]]


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

    def last_seq(self, namespace: str) -> int: ...

    def get_cursor(self, namespace: str) -> int: ...

    def change_token(self, namespace: str) -> tuple[int, int]:
        """(folding cursor, last op-log sequence number): changes whenever any process
        folds, consolidates or edits the namespace's graph, so a process can tell that its
        working graph went stale."""
        ...

    # graph
    def load_graph(self, namespace: str, *, folded_only: bool = True) -> GraphSnapshot: ...

    def commit(self, namespace: str, changes: ChangeSet, *, cursor: int | None = None,
               durable: bool = True) -> None:
        """Persist a change set (and optionally advance the folding cursor) atomically.

        ``durable=False`` is for derived state that the event log can rebuild (folding,
        consolidation passes): the write is atomic and survives the process, but a power
        failure or OS crash may undo it, together with every write after it and none
        before it. The cursor goes back with it, and those events fold again. Appends
        to the event log are always durable: an acknowledged event is never lost.
        """
        ...

    def get_node(self, namespace: str, node_id: str) -> Node | None: ...

    def resolve_alias(self, namespace: str, node_id: str) -> str | None: ...

    def history(self, namespace: str, node_id: str) -> list[OpRecord]: ...

    def search_text(
        self, namespace: str, query: str, kinds: Iterable[NodeKind] | None, limit: int,
        *, max_rows: int | None = None,
    ) -> list[tuple[str, float]]:
        """Lexical search over node text; higher score is better. ``max_rows``: about how
        many index rows a backend that can bound its work scores at most (the commonest
        words of the query are left out first); None scores every matching row."""
        ...

    # namespaces
    def namespaces(self) -> list[str]: ...

    def counts(self, namespace: str) -> dict[str, Any]: ...

    def wipe(self, namespace: str) -> None: ...

    def get_meta(self, namespace: str, key: str) -> Any: ...

    # embedding cache
    def cached_vectors(
        self, namespace: str, model: str, hashes: Sequence[str]
    ) -> dict[str, np.ndarray]: ...

    def cache_vectors(
        self, namespace: str, model: str, items: Sequence[tuple[str, np.ndarray]]
    ) -> None:
        """Remember embeddings by content hash; a cache, so not durable (see ``commit``)."""
        ...

    # namespace leases (one folder per namespace across server processes)
    def try_lease(self, namespace: str, owner: str, ttl_s: float) -> bool:
        """Acquire or renew the namespace's lease for ``ttl_s`` seconds; true if ``owner``
        holds it now (an expired lease of another owner is taken over)."""
        ...

    def release_lease(self, namespace: str, owner: str) -> None:
        """Give the lease up (a no-op unless ``owner`` holds it)."""
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
