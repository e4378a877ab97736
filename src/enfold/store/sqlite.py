"""The SQLite backend: one file, WAL, one writer, named migrations, FTS5, vector blobs.

Also serves ``memory:`` (an in-process SQLite database), so the in-memory store behaves
exactly like the file store. All SQL of this backend lives here; sqlite3 errors are
translated into :class:`enfold.errors.StoreError` at this seam.
"""

from __future__ import annotations

import json
import logging
import math
import re
import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from itertools import islice
from pathlib import Path
from sys import intern
from typing import Any
from urllib.parse import quote

import numpy as np

from enfold.changeset import ChangeSet
from enfold.errors import StoreError
from enfold.model import Edge, EdgeType, Node, NodeKind, OpRecord, now
from enfold.store.base import (
    EMBEDDER_KEY,
    TABLES,
    Appended,
    EventRecord,
    Fences,
    GraphSnapshot,
    check_fence,
    fts_text,
    words,
)
from enfold.store.sql import NODE_COLS, OP_COLS, TOKEN_SQL, SqlStore, token_of

log = logging.getLogger("enfold.store")

_WORD = re.compile(r"\w+", re.UNICODE)


_LABEL_CHUNK = 256  # index rows whose stored columns search_text reads at a time
_LABELS_KEPT = 100_000  # index rows whose stored columns it keeps at most (~15 MB)
_SCORED_FIRST = 1_024  # best rows search_text takes first (all of them if these fall short)
_QUERIES_KEPT = 4  # queries (words and kinds) whose scored rows search_text keeps
#: The text index's rows carry their node's kind in the low bits of their rowid (rowid = n ×
#: 16 + code, n in the order the rows were written): a search keeps the rows of the kinds it
#: asks for without reading their stored columns. Code 0: unknown (the columns say).
#: Migration 0009 writes the same codes; they never change.
KIND_BITS = 4
KIND_CODES: dict[str, int] = {"event": 1, "concept": 2, "intent": 3, "time": 4, "person": 5,
                              "claim": 6, "fact": 7}
_KIND_MASK = (1 << KIND_BITS) - 1


def query_words(text: str) -> list[str]:
    """The distinct words of a free-text query, in order (at most 64)."""
    return words(text)[:64]


def fts_query(text: str | list[str]) -> str | None:
    """A safe FTS5 query for free text (or its words): every word quoted, OR-ed. None when
    no words."""
    words = query_words(text) if isinstance(text, str) else text
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words)


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def _upsert(table: str, cols: str, key: tuple[str, ...], grow: tuple[str, ...] = ()) -> str:
    """INSERT of a row that updates the row of the same key in place when there is one.

    Unlike INSERT OR REPLACE, which deletes the old row and inserts a new one (every index
    entry removed and added again, a rowid table's row moved to a new rowid), an update in
    place leaves alone the indexes whose columns did not change: an edge whose weight
    decayed, or a concept reinforced, dirties its table's page and no index page. Columns
    in ``grow`` never go down: they keep the larger of the stored and the new value.
    """
    names = [c.strip() for c in cols.split(",")]
    sets = ", ".join(f"{c} = MAX({table}.{c}, excluded.{c})" if c in grow
                     else f"{c} = excluded.{c}" for c in names if c not in key)
    return (f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join('?' * len(names))}) "
            f"ON CONFLICT ({', '.join(key)}) DO UPDATE SET {sets}")


class SQLiteStore(SqlStore):
    """A :class:`~enfold.store.base.Store` on one SQLite file (or ``:memory:``)."""

    _TS = "COALESCE(json_extract(n.attrs, '$.ts'), n.created_at)"

    def __init__(self, path: str, *, url: str | None = None, dtype: str = "float32") -> None:
        self.path = path
        self.url = url or f"sqlite:///{path}"
        self.shared = path != ":memory:"
        self.dtype = np.dtype(dtype)
        self.embedder_name: str | None = None
        self._lock = threading.RLock()
        self._fences = Fences()
        self._vocab_ready = False  # the scratch tables of _word_counts exist
        self._df: dict[str, int] = {}  # word -> index rows matching it (see _word_counts)
        self._df_from = self._df_until = 0  # the index's largest row number it is good for
        # What search_text read, kept while the text index is unchanged: the last queries'
        # scored rows, and the stored columns of the index rows read (see _text_hits).
        self._text_writes = 0  # this connection's transactions that may write the index
        self._text_token: tuple[int, int] | None = None  # (data_version, _text_writes)
        self._hits: dict[tuple[Any, ...], tuple[list[tuple[int, float]], bool]] = {}
        self._labels: dict[int, tuple[str, str, str]] = {}
        try:
            self._db = sqlite3.connect(
                path, isolation_level=None, check_same_thread=False, timeout=30.0
            )
            mode = self._wal_mode(timeout=30.0)
            self._db.execute("PRAGMA synchronous=FULL")
            self._durable = True  # the synchronous level set on the connection (see _tx)
            # Skipping the sync is safe only with a write-ahead log (replayed in order up
            # to its last synced frame); in rollback-journal mode every commit syncs.
            self._wal = str(mode).lower() == "wal"
            # 64 MiB of page cache (the default is 2 MiB): a large store's B-tree interiors
            # stay in memory instead of being re-read on every write.
            self._db.execute("PRAGMA cache_size=-65536")
            # Checkpoint every 16k WAL pages (64 MiB) instead of 1k: a fold group rewrites
            # the same index pages again and again, and a checkpoint copies each page once
            # however often it was written since the last one. The WAL file is cut back to
            # 64 MiB after a checkpoint.
            self._db.execute("PRAGMA wal_autocheckpoint=16384")
            self._db.execute("PRAGMA journal_size_limit=67108864")
            self._db.execute("PRAGMA foreign_keys=ON")
            # Deleted content is overwritten with zeros, so that what forget() and wipe()
            # delete leaves the file (FAST is not enough: it leaves freed pages as they
            # were, and FTS5 frees whole pages of index segments; see erase_deleted).
            self._db.execute("PRAGMA secure_delete=ON")
            self._migrate()
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite store {path!r}: {exc}") from exc

    def _wal_mode(self, timeout: float) -> str:
        """Switch to WAL (a no-op once the file is in WAL mode). On a new file opened by
        several processes at once the switch can meet another's lock, and SQLite answers
        "database is locked" without waiting: try again until ``timeout``."""
        deadline = time.monotonic() + timeout
        pause = 0.005
        while True:
            try:
                return str(self._db.execute("PRAGMA journal_mode=WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                busy = exc.sqlite_errorcode in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
                if not busy or time.monotonic() >= deadline:
                    raise
            time.sleep(pause)
            pause = min(2 * pause, 0.1)

    # ----------------------------------------------------------- plumbing
    def sidecar(self, namespace: str, name: str) -> Path | None:
        """``<db>.<namespace>.<name>`` beside the database file (None in memory)."""
        if not self.shared:
            return None
        return Path(f"{self.path}.{quote(namespace, safe='')}.{name}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _tx(self, *, durable: bool = True, text: bool = True) -> Iterator[sqlite3.Connection]:
        """One write transaction (BEGIN IMMEDIATE: the single writer), or a savepoint.
        ``text``: whether it may write the text index (``False``: access statistics and
        leases; what :meth:`_text_hits` keeps stays good across them).

        A durable transaction syncs the WAL at its commit (``synchronous=FULL``); one that
        is not (``NORMAL``) leaves its frames to the next sync. The WAL is replayed in
        order up to its last synced frame, so a power failure can only undo a tail of
        non-durable commits, and a durable commit makes every commit before it durable.
        A savepoint follows its transaction.
        """
        with self._lock:
            if text:
                self._text_writes += 1
            nested = self._db.in_transaction
            mark = self._fences.mark()
            try:
                if nested:
                    self._db.execute("SAVEPOINT enfold_sp")
                else:
                    durable = durable or not self._wal
                    if durable is not self._durable:
                        # Set between transactions: SQLite applies it to the next commit.
                        self._db.execute(f"PRAGMA synchronous={'FULL' if durable else 'NORMAL'}")
                        self._durable = durable
                    self._db.execute("BEGIN IMMEDIATE")
                yield self._db
                if nested:
                    self._db.execute("RELEASE enfold_sp")
                else:
                    self._db.execute("COMMIT")
                    self._fences.settle()
            except BaseException as exc:
                self._fences.discard(mark)
                if nested:
                    self._db.execute("ROLLBACK TO enfold_sp")
                    self._db.execute("RELEASE enfold_sp")
                elif self._db.in_transaction:
                    self._db.execute("ROLLBACK")
                if isinstance(exc, sqlite3.Error):
                    raise StoreError(f"SQLite: {exc}") from exc
                raise

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """One read transaction: every query inside sees the same committed state, however
        other processes write meanwhile (WAL readers keep their snapshot). Inside a write
        transaction, that one."""
        with self._lock:
            if self._db.in_transaction:
                yield
                return
            try:
                self._db.execute("BEGIN")
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc
            try:
                yield
            finally:
                if self._db.in_transaction:
                    self._db.execute("COMMIT")  # (read only: this only ends the snapshot)

    def _q(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        with self._lock:
            try:
                return self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc

    def _migrate(self) -> None:
        """Apply the named migrations not applied yet. Processes may open a new file at the
        same moment: each migration runs under the write lock (BEGIN IMMEDIATE) and is
        skipped if another process recorded it while this one waited for the lock."""
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL)"
        )
        done = {r[0] for r in self._db.execute("SELECT name FROM migrations")}
        folder = resources.files("enfold.store") / "migrations" / "sqlite"
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if not entry.name.endswith(".sql") or entry.name in done:
                continue
            script = entry.read_text(encoding="utf-8")
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if self._db.execute("SELECT 1 FROM migrations WHERE name = ?",
                                    (entry.name,)).fetchone() is None:
                    for statement in _split_sql(script):
                        self._db.execute(statement)
                    self._db.execute("INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
                                     (entry.name, now()))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------ rows
    @staticmethod
    def _node_row(n: Node) -> tuple[Any, ...]:
        return (
            n.namespace, n.id, n.kind.value, n.text, _dumps(dict(n.attrs)), n.created_at,
            n.updated_at, n.last_access, n.access_count, n.plan_id,
        )

    _NODE_VALUES = "(?,?,?,?,?,?,?,?,?,?)"
    # Access statistics only grow: a node written from a working graph that missed another
    # process's touch keeps the stored count and time (see touch).
    _NODE_UPSERT = _upsert("nodes", NODE_COLS, ("namespace", "id"),
                           grow=("access_count", "last_access"))
    _EDGE_UPSERT = _upsert("edges", "namespace, src, type, dst, weight, created_at, updated_at, "
                           "plan_id", ("namespace", "src", "type", "dst"))
    _VECTOR_UPSERT = _upsert("vectors", "namespace, node_id, dim, dtype, data",
                             ("namespace", "node_id"))

    def _provenance(self, namespace: str, node_id: str | None = None) -> dict[str, list[str]]:
        """Provenance lists by node (of one node, or of the whole namespace)."""
        out: dict[str, list[str]] = {}
        if node_id is None:
            rows = self._q("SELECT node_id, event_id FROM provenance WHERE namespace = ? "
                           "ORDER BY node_id, pos", (namespace,))
        else:
            rows = self._q("SELECT node_id, event_id FROM provenance WHERE namespace = ? "
                           "AND node_id = ? ORDER BY pos", (namespace, node_id))
        for nid, eid in rows:
            out.setdefault(nid, []).append(eid)
        return out

    # ------------------------------------------------------- event log
    def append_events(self, namespace: str, events: Sequence[EventRecord]) -> list[Appended]:
        out: list[Appended] = []
        with self._tx() as db:
            last = db.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE namespace = ?", (namespace,)
            ).fetchone()[0]
            for rec in events:
                row = None
                if rec.external_id is not None:
                    row = db.execute(
                        "SELECT id, seq FROM events WHERE namespace = ? AND external_id = ?",
                        (namespace, rec.external_id),
                    ).fetchone()
                if row is None:
                    row = db.execute(
                        "SELECT id, seq FROM events WHERE namespace = ? AND content_hash = ?",
                        (namespace, rec.content_hash),
                    ).fetchone()
                if row is not None:
                    out.append(Appended(row[0], row[1], False))
                    continue
                last = max(last + 1, rec.seq or 0)
                node = rec.node.with_changes(attrs={**rec.node.attrs, "seq": last})
                db.execute(
                    "INSERT INTO events (namespace, seq, id, content_hash, external_id) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (namespace, last, node.id, rec.content_hash, rec.external_id),
                )
                db.execute(
                    f"INSERT INTO nodes ({self._NODE_COLS}) VALUES {self._NODE_VALUES}",
                    self._node_row(node),
                )
                _fts_put(db, namespace, node.id, node.kind.value, node.text)
                out.append(Appended(node.id, last, True))
        return out

    # ------------------------------------------------------------ graph
    def load_graph(self, namespace: str, *, folded_only: bool = True) -> GraphSnapshot:
        with self._snapshot():
            return self._load_graph(namespace, folded_only)

    def _load_graph(self, namespace: str, folded_only: bool) -> GraphSnapshot:
        token = self.change_token(namespace)
        cursor = token[1]
        rows = self._q(
            f"SELECT {self._NODE_COLS} FROM nodes WHERE namespace = ?", (namespace,)
        )
        prov = self._provenance(namespace)
        nodes = [self._row_node(r, prov.get(r[1], ())) for r in rows]
        if folded_only:
            nodes = [
                n for n in nodes
                if n.kind is not NodeKind.EVENT or int(n.attrs.get("seq", 0)) <= cursor
            ]
        keep = {n.id for n in nodes}
        edges = [
            Edge(namespace, r[0], r[2], EdgeType(r[1]), r[3], r[4], r[5], r[6])
            for r in self._q(
                "SELECT src, type, dst, weight, created_at, updated_at, plan_id "
                "FROM edges WHERE namespace = ?", (namespace,)
            )
        ]
        vectors = [
            (r[0], self._unblob(r[1], r[2], r[3]))
            for r in self._q(
                "SELECT node_id, dim, dtype, data FROM vectors WHERE namespace = ?", (namespace,)
            )
            if r[0] in keep
        ]
        aliases = [(r[0], r[1]) for r in self._q(
            "SELECT old_id, new_id FROM aliases WHERE namespace = ?", (namespace,)
        )]
        meta = [(r[0], json.loads(r[1])) for r in self._q(
            "SELECT key, value FROM meta WHERE namespace = ? AND key != ?",
            (namespace, EMBEDDER_KEY),
        )]
        return GraphSnapshot(nodes, edges, vectors, aliases, meta, token)

    def commit(self, namespace: str, changes: ChangeSet, *, cursor: int | None = None,
               durable: bool = True) -> None:
        if cursor is None and changes.empty():
            return
        fence = self._fences.get(namespace)
        with self._tx(durable=durable) as db:
            token = token_of(db.execute(TOKEN_SQL, (namespace, namespace)).fetchone())
            expected = self._fences.expected(fence)
            check_fence(namespace, expected, token)
            self._commit_nodes(db, namespace, changes)
            reset, prov_rows = changes.provenance_writes()
            db.executemany("DELETE FROM provenance WHERE namespace = ? AND node_id = ?",
                           [(namespace, i) for i in reset])
            db.executemany("INSERT OR REPLACE INTO provenance (namespace, node_id, pos, event_id)"
                           " VALUES (?,?,?,?)", [(namespace, *r) for r in prov_rows])
            db.executemany(
                "DELETE FROM edges WHERE namespace = ? AND src = ? AND type = ? AND dst = ?",
                [(namespace, s, t.value, d) for (s, t, d), e in changes.edges.items()
                 if e is None])
            db.executemany(
                self._EDGE_UPSERT,
                [(namespace, s, t.value, d, e.weight, e.created_at, e.updated_at, e.plan_id)
                 for (s, t, d), e in changes.edges.items() if e is not None])
            db.executemany("DELETE FROM vectors WHERE namespace = ? AND node_id = ?",
                           [(namespace, i) for i, v in changes.vectors.items() if v is None])
            db.executemany(
                self._VECTOR_UPSERT, [(namespace, i, *self._blob(v))
                                       for i, v in changes.vectors.items() if v is not None])
            db.executemany(
                "INSERT OR REPLACE INTO aliases (namespace, old_id, new_id) VALUES (?,?,?)",
                [(namespace, o, n) for o, n in changes.aliases.items()])
            db.executemany("DELETE FROM oplog WHERE namespace = ? AND target = ?",
                           [(namespace, i) for i in changes.purge_history])
            db.executemany("DELETE FROM oplog WHERE namespace = ? AND peer = ?",
                           [(namespace, i) for i in changes.purge_history])
            db.executemany("DELETE FROM embed_cache WHERE namespace = ? AND hash = ?",
                           [(namespace, h) for h in changes.purge_cache])
            if changes.ops:
                seq = db.execute(
                    "SELECT COALESCE(MAX(seq), 0) FROM oplog WHERE namespace = ?", (namespace,)
                ).fetchone()[0]
                db.executemany(
                    "INSERT INTO oplog (namespace, seq, plan_id, op, target, before, after, "
                    "reasoning, at, peer) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    [(namespace, seq + i, op.plan_id, op.op, op.target,
                      None if op.before is None else _dumps(op.before),
                      None if op.after is None else _dumps(op.after), op.reasoning, op.at,
                      op.peer)
                     for i, op in enumerate(changes.ops, 1)])
            db.executemany(
                "INSERT OR REPLACE INTO meta (namespace, key, value) VALUES (?,?,?)",
                [(namespace, k, _dumps(v)) for k, v in changes.meta.items()])
            space = self._vector_space(changes)
            if space is not None:
                db.execute("INSERT OR IGNORE INTO meta (namespace, key, value) VALUES (?,?,?)",
                           (namespace, EMBEDDER_KEY, space))
            if cursor is not None:
                db.execute(
                    "INSERT OR REPLACE INTO cursors (namespace, seq) VALUES (?, ?)",
                    (namespace, cursor),
                )
            # (under the write lock since the token was read: nobody else moved it)
            db.execute("INSERT OR REPLACE INTO graph_versions (namespace, version) VALUES (?, ?)",
                       (namespace, token[0] + 1))
            if fence is not None and expected is not None:
                self._fences.advance(fence, (token[0] + 1, token[1] if cursor is None
                                             else cursor))

    def touch(self, namespace: str, node_ids: Sequence[str], at: float) -> None:
        counts = Counter(node_ids)
        if not counts:
            return
        with self._tx(durable=False, text=False) as db:
            db.executemany("UPDATE nodes SET access_count = access_count + ?, "
                           "last_access = MAX(last_access, ?) WHERE namespace = ? AND id = ?",
                           [(n, at, namespace, i) for i, n in counts.items()])

    def _commit_nodes(self, db: sqlite3.Connection, namespace: str, changes: ChangeSet
                      ) -> None:
        """Write changed nodes and their text-index rows. A node whose state before the
        change is known and whose indexed text did not change keeps its FTS row."""
        rows: list[tuple[Any, ...]] = []
        reindex: list[Node] = []
        gone: list[str] = []
        stale: list[tuple[str, str]] = []  # FTS rows to delete first
        for node_id, node in changes.nodes.items():
            known = node_id in changes.before
            old = changes.before.get(node_id)
            if node is None:
                gone.append(node_id)
                stale.append((namespace, node_id))
                # The graph may not hold what the store does (an event appended but not yet
                # folded, then forgotten): ask the store unless the graph knew the node.
                kind = old.kind.value if old is not None else None
                if kind is None:
                    row = db.execute("SELECT kind FROM nodes WHERE namespace = ? AND id = ?",
                                     (namespace, node_id)).fetchone()
                    kind = None if row is None else row[0]
                if kind == NodeKind.EVENT.value:
                    db.execute("DELETE FROM events WHERE namespace = ? AND id = ?",
                               (namespace, node_id))
                continue
            if node.namespace != namespace:
                raise StoreError(f"node {node_id} belongs to {node.namespace!r}")
            rows.append(self._node_row(node))
            if not known or old is None or fts_text(old) != fts_text(node) \
                    or old.kind is not node.kind:
                reindex.append(node)
                if not (known and old is None):  # a node new to the store has no row yet
                    stale.append((namespace, node_id))
        db.executemany("DELETE FROM node_text WHERE rowid IN (SELECT fts_rowid FROM fts_rows "
                       "WHERE namespace = ? AND node_id = ?)", stale)
        db.executemany("DELETE FROM fts_rows WHERE namespace = ? AND node_id = ?", stale)
        db.executemany("DELETE FROM nodes WHERE namespace = ? AND id = ?",
                       [(namespace, i) for i in gone])
        db.executemany("DELETE FROM vectors WHERE namespace = ? AND node_id = ?",
                       [(namespace, i) for i in gone])
        db.executemany(self._NODE_UPSERT, rows)
        for node in reindex:
            _fts_put(db, namespace, node.id, node.kind.value, fts_text(node))

    def get_node(self, namespace: str, node_id: str) -> Node | None:
        rows = self._q(
            f"SELECT {self._NODE_COLS} FROM nodes WHERE namespace = ? AND id = ?",
            (namespace, node_id),
        )
        if not rows:
            return None
        return self._row_node(rows[0], self._provenance(namespace, node_id).get(node_id, ()))

    def history(self, namespace: str, node_id: str) -> list[OpRecord]:
        # Each half names its index: without statistics (the store runs no ANALYZE) the
        # planner would walk the primary key for the ORDER BY, reading the whole op log.
        return self._ops(namespace, self._q(
            f"SELECT {OP_COLS} FROM oplog INDEXED BY oplog_by_target "
            "WHERE namespace = ? AND target = ? UNION ALL "
            f"SELECT {OP_COLS} FROM oplog INDEXED BY oplog_by_peer "
            "WHERE namespace = ? AND peer = ? ORDER BY seq",
            (namespace, node_id, namespace, node_id)))

    def search_text(
        self, namespace: str, query: str, kinds: Iterable[NodeKind] | None, limit: int,
        *, max_rows: int | None = None,
    ) -> list[tuple[str, float]]:
        """BM25 search, best first (ties in index order): the ``limit`` best rows of
        ``kinds`` in ``namespace``.

        The rows are scored by one statement that reads no row's columns, only its
        postings and length (namespace, kind and node id are UNINDEXED columns, and reading
        them for each of some thousands of rows cost more than scoring them), and only the
        best :data:`_SCORED_FIRST` (or 8 × ``limit``) are taken, all of them if those hold
        too few rows of ``namespace``; only rows of ``kinds`` are scored, told by their
        rowids (:data:`KIND_CODES`); then the stored columns are read for the best rows
        only, a chunk at a time, until ``limit`` rows of ``kinds`` in ``namespace`` are
        found. The scored rows are kept for the next calls with the same words and kinds,
        and the columns read for any later query, while the text index is unchanged (no
        transaction of this connection that may write it, no commit by any other): queries
        about one topic meet the same rows.
        :meth:`_search_text_reference` is the one-statement version it equals."""
        wanted = None if kinds is None else {k.value for k in kinds}
        codes = None if wanted is None else {KIND_CODES.get(k, 0) for k in wanted} - {0}
        out: list[tuple[str, float]] = []
        with self._lock:
            first: int | None = max(_SCORED_FIRST, 8 * limit)
            while True:
                hits = self._text_hits(query, max_rows, first, codes)
                if hits is None or limit <= 0:
                    return out
                rows, complete, labels = hits
                left = iter(rows)
                try:
                    # (the rows left are of the asked kinds, but not all of this namespace:
                    # a chunk of at least a quarter, so that many namespaces cost few reads)
                    while chunk := list(islice(left, min(_LABEL_CHUNK, max(
                            int(limit) - len(out), _LABEL_CHUNK // 4)))):
                        missing = [r for r, _ in chunk if r not in labels]
                        if missing:
                            # (namespaces and kinds are few: one string each is kept)
                            labels.update((r, (intern(ns), intern(kind), node_id))
                                          for r, ns, kind, node_id in self._db.execute(
                                              "SELECT rowid, namespace, kind, node_id FROM "
                                              "node_text WHERE rowid IN "
                                              f"({','.join('?' * len(missing))})", missing))
                        for r, score in chunk:
                            label = labels.get(r)
                            if label is None or label[0] != namespace or \
                                    (wanted is not None and label[1] not in wanted):
                                continue
                            # bm25() is lower-is-better; flip the sign so callers sort
                            # descending.
                            out.append((label[2], -float(score)))
                            if len(out) == limit:
                                return out
                except sqlite3.Error as exc:
                    raise StoreError(f"SQLite: {exc}") from exc
                if complete:
                    return out
                # the best rows held too few of these kinds: all of them, from the start
                out, first = [], None

    def word_weights(self, namespace: str, words: Iterable[str]) -> dict[str, float]:
        """Each word's inverse document frequency as FTS5's bm25() weighs it,
        ``ln((N - n + 0.5) / (n + 0.5))`` (at least 1e-6), with ``n`` the index rows it
        matches and ``N`` the rows the index has held (its largest row number: deleted rows
        count, as an estimate). Over the whole index, as BM25's own statistics are; the
        counts are those :meth:`search_text` keeps for bounding a query (no read for a
        word it has just searched)."""
        listed = [w.lower() for w in dict.fromkeys(words) if w]
        if not listed:
            return {}
        with self._lock:
            try:
                counts = self._word_counts(listed)
                rows = max(self._df_from, max(counts.values(), default=0))
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc
        # a word with no letter or digit ("_") is no term of the index: no search matches it
        return {w: max(math.log((rows - n + 0.5) / (n + 0.5)), 1e-6)
                if any(c.isalnum() for c in w) else 0.0 for w, n in counts.items()}

    def _match(self, query: str, max_rows: int | None) -> tuple[str | None, int | None]:
        """The FTS5 expression of the query's words, bounded to ``max_rows`` scored rows
        (None: no word can match), and the rowid floor when even the rarest matches more."""
        words = query_words(query)
        floor = None
        if max_rows is not None and words:
            words, floor = self._bounded_words(words, max_rows)
        return fts_query(words), floor

    def _text_hits(self, query: str, max_rows: int | None, first: int | None,
                   codes: set[int] | None = None,
                   ) -> tuple[list[tuple[int, float]], bool,
                              dict[int, tuple[str, str, str]]] | None:
        """The index rows the query's (bounded) words match, as (rowid, bm25) best first
        (ties in rowid order): the ``first`` best (None: all), whether that is all of them,
        and the stored columns read so far (rowid -> namespace, kind, node id); None when
        no word can match. Only rows whose rowid carries one of the kind ``codes`` (or code
        0, unknown) are scored when ``codes`` is given: SQLite tests the rowid before it
        computes the row's bm25, which is where the time goes, and the score of a row does
        not depend on which others are scored (BM25's statistics are the whole index's).
        Both are kept while the text index is unchanged: the rows for the last few
        queries, the columns for every row read (at most :data:`_LABELS_KEPT`)."""
        match, floor = self._match(query, max_rows)
        if match is None:
            return None
        kinds = None if codes is None else tuple(sorted({0, *codes}))
        with self._lock:
            try:
                # data_version moves when another connection commits, _text_writes when
                # this one may have written the index: a rowid of a deleted row can be
                # given to a new one
                index = (int(self._db.execute("PRAGMA data_version").fetchone()[0]),
                         self._text_writes)
                if index != self._text_token or len(self._labels) > _LABELS_KEPT:
                    self._text_token, self._hits = index, {}
                    self._labels = {}
                key = (match, floor, kinds)
                kept = self._hits.get(key)
                if kept is not None and (
                        kept[1] or (first is not None and len(kept[0]) >= first)):
                    return kept[0], kept[1], self._labels
                sql = "SELECT rowid, bm25(node_text) AS s FROM node_text WHERE node_text MATCH ?"
                args: list[Any] = [match]
                if floor is not None:
                    sql += " AND rowid >= ?"
                    args.append(floor)
                if kinds is not None:
                    sql += f" AND (rowid & {_KIND_MASK}) IN ({','.join('?' * len(kinds))})"
                    args.extend(kinds)
                sql += " ORDER BY s, rowid"
                if first is not None:
                    sql += " LIMIT ?"
                    args.append(first)
                rows = self._db.execute(sql, args).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc
            complete = first is None or len(rows) < first
            self._hits.pop(key, None)
            self._hits[key] = (rows, complete)
            while len(self._hits) > _QUERIES_KEPT:
                del self._hits[next(iter(self._hits))]
            return rows, complete, self._labels

    def _search_text_reference(
        self, namespace: str, query: str, kinds: Iterable[NodeKind] | None, limit: int,
        *, max_rows: int | None = None,
    ) -> list[tuple[str, float]]:
        """:meth:`search_text` in one statement that reads every matching row's columns
        (the reference the tests compare against; slower by the rows it reads)."""
        match, floor = self._match(query, max_rows)
        if match is None:
            return []
        sql = ("SELECT node_id, bm25(node_text) AS s FROM node_text "
               "WHERE node_text MATCH ? AND namespace = ?")
        args: list[Any] = [match, namespace]
        if floor is not None:
            sql += " AND rowid >= ?"
            args.append(floor)
        kind_list = [k.value for k in kinds] if kinds is not None else None
        if kind_list is not None:
            sql += f" AND kind IN ({','.join('?' * len(kind_list))})"
            args.extend(kind_list)
        sql += " ORDER BY s, rowid LIMIT ?"
        args.append(limit)
        return [(r[0], -float(r[1])) for r in self._q(sql, args)]

    def _bounded_words(self, words: list[str], max_rows: int) -> tuple[list[str], int | None]:
        """The words of a query that BM25 scores, so that at most about ``max_rows`` index
        rows are scored, and a rowid floor when even the rarest word matches more.

        FTS5 scores every row that any word matches: a query with "the" in it scores the
        whole index, and its cost grows with the store. Here each word's document count
        (fts5vocab, over the whole index as BM25's own statistics are) decides: words that
        occur nowhere are dropped (they change nothing), then words are kept rarest first
        while their counts sum to at most ``max_rows``. Words left out are the commonest,
        the ones BM25 weighs least (a word in half the rows or more scores ~0 in FTS5). If
        every word fits, the query is unchanged. If even the rarest word matches more than
        ``max_rows`` rows, only its most recent ``max_rows`` matches are scored.
        """
        with self._lock:
            try:
                counts = self._word_counts(words)
                present = [w for w in words if counts.get(w, 0) > 0]
                if not present:
                    return [], None
                order = sorted(present, key=lambda w: counts[w])
                kept: list[str] = []
                total = 0
                for w in order:
                    if kept and total + counts[w] > max_rows:
                        break
                    kept.append(w)
                    total += counts[w]
                floor = None
                if total > max_rows:
                    row = self._db.execute(
                        "SELECT rowid FROM node_text WHERE node_text MATCH ? "
                        "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                        (fts_query(kept), max_rows - 1)).fetchone()
                    floor = None if row is None else int(row[0])
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc
        keep = set(kept)
        return [w for w in words if w in keep], floor

    def _word_counts(self, words: list[str]) -> dict[str, int]:
        """Rows of the text index that each word matches (an upper bound for a word the
        tokenizer splits in several terms: its rarest term's count). Caller holds the lock.

        fts5vocab counts a term's rows by reading its whole posting list (4 ms for "the" in
        120k rows), so counts are cached until the index has grown by a tenth (its largest
        rowid says how much was written, by any process): they only decide which words a
        bounded query leaves out."""
        db = self._db
        top = int(db.execute("SELECT COALESCE(MAX(rowid), 0) FROM node_text").fetchone()[0]
                  ) >> KIND_BITS
        if top > self._df_until or top < self._df_from:
            self._df.clear()
            self._df_from, self._df_until = top, top + max(500, top // 10)
        fresh = [w for w in words if w not in self._df]
        if not fresh:
            return {w: self._df[w] for w in words}
        if not self._vocab_ready:
            # The query's words go through the index's own tokenizer (porter stemming) in a
            # scratch table, so that they are looked up as the index holds them.
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.enfold_qwords USING "
                       "fts5(text, tokenize = 'porter unicode61')")
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.enfold_qterms USING "
                       "fts5vocab(temp, enfold_qwords, 'instance')")
            db.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.enfold_vocab USING "
                       "fts5vocab(main, node_text, 'row')")
            self._vocab_ready = True
        db.execute("DELETE FROM temp.enfold_qwords")
        db.executemany("INSERT INTO temp.enfold_qwords (rowid, text) VALUES (?, ?)",
                       list(enumerate(fresh)))
        terms: dict[int, set[str]] = {}
        for term, doc in db.execute("SELECT term, doc FROM temp.enfold_qterms"):
            terms.setdefault(int(doc), set()).add(term)
        db.execute("DELETE FROM temp.enfold_qwords")
        wanted = sorted({t for ts in terms.values() for t in ts})
        df: dict[str, int] = {}
        for term in wanted:
            # one term at a time: fts5vocab seeks a term it is given by "=", and with
            # "IN (...)" walked the vocabulary (8 ms a query at 100k events, not 0.2)
            for t, doc in db.execute("SELECT term, doc FROM temp.enfold_vocab WHERE term = ?",
                                     (term,)):
                df[t] = doc
        self._df.update({w: min(df.get(t, 0) for t in terms[i]) if i in terms else 0
                         for i, w in enumerate(fresh)})
        counts = {w: self._df[w] for w in words}
        return counts

    # -------------------------------------------------------- namespaces
    def counts(self, namespace: str) -> dict[str, Any]:
        nodes = {r[0]: r[1] for r in self._q(
            "SELECT kind, COUNT(*) FROM nodes WHERE namespace = ? GROUP BY kind", (namespace,)
        )}
        edges = {r[0]: r[1] for r in self._q(
            "SELECT type, COUNT(*) FROM edges WHERE namespace = ? GROUP BY type", (namespace,)
        )}
        return {
            "events": self._q(
                "SELECT COUNT(*) FROM events WHERE namespace = ?", (namespace,))[0][0],
            "folded": self._q(
                "SELECT COUNT(*) FROM events WHERE namespace = ? AND seq <= ?",
                (namespace, self.get_cursor(namespace)))[0][0],
            "last_seq": self.last_seq(namespace),
            "cursor": self.get_cursor(namespace),
            "nodes": nodes,
            "edges": edges,
        }

    def wipe(self, namespace: str) -> None:
        with self._tx() as db:
            for table in ("nodes", "provenance", "events", "edges", "vectors", "aliases",
                          "oplog", "cursors", "meta", "embed_cache"):
                db.execute(f"DELETE FROM {table} WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM node_text WHERE namespace = ?", (namespace,))
            db.execute("DELETE FROM fts_rows WHERE namespace = ?", (namespace,))

    def erase_deleted(self) -> bool:
        """Make what was deleted unreadable from the database files (after a forget or a
        wipe); true when the write-ahead log could be emptied.

        ``secure_delete`` zeroes deleted rows and freed pages, but not every copy: FTS5
        keeps a deleted row's terms in its index segments (a delete only adds a tombstone)
        until segments merge, and when a full b-tree page is split, the cells moved to the
        new page stay behind in the old one's unused space, where no later delete reaches
        them (a forgotten event's words were found so, in a live ``nodes`` page). So
        'optimize' merges
        the text index into one segment, then ``VACUUM`` rebuilds the file from the rows
        that are left — its cost grows with the file, and forgetting is rare — and a
        TRUNCATE checkpoint copies the log into the database and cuts it to zero bytes (the
        old versions of every page live in the log until then). Another connection reading
        an old snapshot holds the rebuild or the checkpoint back (false; what is left is
        erased at the next forget's erase, the log at the next checkpoint that completes).
        """
        if not self.shared:  # an in-memory database: no file to erase from
            return True
        with self._lock:
            with self._tx() as db:
                db.execute("INSERT INTO node_text (node_text) VALUES ('optimize')")
            try:
                self._db.execute("VACUUM")
            except sqlite3.OperationalError as exc:
                if exc.sqlite_errorcode not in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
                    raise StoreError(f"SQLite: {exc}") from exc
                log.warning("VACUUM after a forget was held back by another connection: %s",
                            exc)
                vacuumed = False
            else:
                vacuumed = True
            try:
                busy = self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc
            return vacuumed and not busy

    def event_words(self, namespace: str, words: Iterable[str], *, exclude: str
                    ) -> set[str]:
        """Which of ``words`` (lowercase) the text of an event other than ``exclude`` holds
        as a whole word: the text index finds candidates (its stemmer matches more), each
        candidate's words are checked."""
        found: set[str] = set()
        with self._lock:
            try:
                for word in words:
                    rows = self._db.execute(
                        "SELECT node_id, text FROM node_text WHERE node_text MATCH ? "
                        "AND namespace = ? AND kind = 'event'", (f'"{word}"', namespace))
                    try:
                        if any(nid != exclude and word in {w.lower() for w in
                                                           _WORD.findall(text)}
                               for nid, text in rows):
                            found.add(word)
                    finally:
                        rows.close()
            except sqlite3.Error as exc:
                raise StoreError(f"SQLite: {exc}") from exc
        return found

    def history_matching(self, namespace: str, node_ids: Iterable[str],
                         probes: Sequence[str]) -> list[OpRecord]:
        """The op-log records of these nodes (as target or peer) whose before, after or
        reasoning contains one of ``probes`` (lowercase; ASCII letters compared without
        case), oldest first: a superset for the caller to check."""
        if not probes:
            return []
        text = "lower(coalesce(before, '') || ' ' || coalesce(after, '') || ' ' || reasoning)"
        cond = " OR ".join([f"instr({text}, ?) > 0"] * len(probes))
        out: dict[int, OpRecord] = {}
        for node_id in dict.fromkeys(node_ids):
            for r in self._ops(namespace, self._q(
                    f"SELECT {OP_COLS} FROM oplog INDEXED BY oplog_by_target "
                    f"WHERE namespace = ? AND target = ? AND ({cond}) UNION "
                    f"SELECT {OP_COLS} FROM oplog INDEXED BY oplog_by_peer "
                    f"WHERE namespace = ? AND peer = ? AND ({cond})",
                    (namespace, node_id, *probes, namespace, node_id, *probes))):
                out[r.seq] = r
        return [out[seq] for seq in sorted(out)]

    def redact_ops(self, namespace: str, records: Sequence[OpRecord]) -> None:
        """Rewrite the payload (before, after, reasoning) of these op records, by seq."""
        with self._tx() as db:
            db.executemany(
                "UPDATE oplog SET before = ?, after = ?, reasoning = ? "
                "WHERE namespace = ? AND seq = ?",
                [(None if r.before is None else _dumps(r.before),
                  None if r.after is None else _dumps(r.after), r.reasoning, namespace, r.seq)
                 for r in records])

    def drop_aliases(self, namespace: str, old_ids: Iterable[str]) -> None:
        """Delete merge aliases (of ids merged into a node that is gone)."""
        with self._tx() as db:
            db.executemany("DELETE FROM aliases WHERE namespace = ? AND old_id = ?",
                           [(namespace, i) for i in old_ids])

    def _vector_space(self, changes: ChangeSet) -> str | None:
        """The EMBEDDER_KEY record of the vectors in ``changes`` (None: nothing to record)."""
        vec = next((v for v in changes.vectors.values() if v is not None), None)
        if vec is None or self.embedder_name is None:
            return None
        return _dumps({"name": self.embedder_name, "dim": int(vec.shape[-1])})

    # ---------------------------------------------------- embedding cache
    def cached_vectors(
        self, namespace: str, model: str, hashes: Sequence[str]
    ) -> dict[str, np.ndarray]:
        out: dict[str, np.ndarray] = {}
        for i in range(0, len(hashes), 500):
            chunk = list(hashes[i:i + 500])
            rows = self._q(
                f"SELECT hash, data FROM embed_cache WHERE namespace = ? AND model = ? "
                f"AND hash IN ({','.join('?' * len(chunk))})", (namespace, model, *chunk),
            )
            for h, data in rows:
                out[h] = np.frombuffer(data, dtype=np.float32).copy()
        return out

    def cache_vectors(
        self, namespace: str, model: str, items: Sequence[tuple[str, np.ndarray]]
    ) -> None:
        with self._tx(durable=False) as db:
            db.executemany(
                "INSERT OR REPLACE INTO embed_cache (namespace, model, hash, data) "
                "VALUES (?,?,?,?)",
                [(namespace, model, h, np.asarray(v, dtype=np.float32).tobytes())
                 for h, v in items],
            )

    # ----------------------------------------------------- namespace leases
    # Leases are transient (a lost one lapses by itself): their writes are not synced.
    def try_lease(self, namespace: str, owner: str, ttl_s: float) -> bool:
        at = now()
        with self._tx(durable=False, text=False) as db:
            row = db.execute("SELECT owner, expires_at FROM leases WHERE namespace = ?",
                             (namespace,)).fetchone()
            if row is not None and row[0] != owner and row[1] > at:
                return False
            db.execute("INSERT OR REPLACE INTO leases (namespace, owner, expires_at) "
                       "VALUES (?, ?, ?)", (namespace, owner, at + ttl_s))
            return True

    def release_lease(self, namespace: str, owner: str) -> None:
        with self._tx(durable=False, text=False) as db:
            db.execute("DELETE FROM leases WHERE namespace = ? AND owner = ?", (namespace, owner))

    def lease_owner(self, namespace: str) -> str | None:
        rows = self._q("SELECT owner FROM leases WHERE namespace = ? AND expires_at > ?",
                       (namespace, now()))
        return str(rows[0][0]) if rows else None

    def take_over_lease(self, namespace: str, owner: str, ttl_s: float, previous: str) -> bool:
        with self._tx(durable=False, text=False) as db:
            cur = db.execute("UPDATE leases SET owner = ?, expires_at = ? "
                             "WHERE namespace = ? AND owner = ?",
                             (owner, now() + ttl_s, namespace, previous))
            return cur.rowcount == 1

    # ------------------------------------------------------------- API keys
    def revoke_api_key(self, key_id: str, at: float) -> bool:
        with self._tx() as db:
            cur = db.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ? "
                             "AND revoked_at IS NULL", (at, key_id))
            return cur.rowcount > 0

    # ------------------------------------------------- raw rows (migrate)
    def dump_rows(self, table: str, namespace: str) -> list[tuple[Any, ...]]:
        """A namespace's rows of one of :data:`~enfold.store.base.TABLES`, in column order."""
        cols = TABLES[table]
        return [tuple(r) for r in self._q(
            f"SELECT {', '.join(cols)} FROM {table} WHERE namespace = ?", (namespace,))]

    def load_rows(self, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert raw rows (``dump_rows`` of another store); the FTS index follows."""
        cols = TABLES[table]
        with self._tx() as db:
            db.executemany(f"INSERT INTO {table} ({', '.join(cols)}) "
                           f"VALUES ({','.join('?' * len(cols))})", rows)
            if table == "nodes":  # (the FTS text does not depend on provenance)
                for r in rows:
                    node = self._row_node(r)
                    _fts_put(db, node.namespace, node.id, node.kind.value, fts_text(node))





def _fts_put(db: sqlite3.Connection, namespace: str, node_id: str, kind: str, text: str
             ) -> None:
    """Index a node's text: the next row number, with the kind's code in the low bits."""
    top = int(db.execute("SELECT COALESCE(MAX(rowid), 0) FROM node_text").fetchone()[0])
    rowid = ((top >> KIND_BITS) + 1) << KIND_BITS | KIND_CODES.get(kind, 0)
    db.execute("INSERT INTO node_text (rowid, text, namespace, node_id, kind) "
               "VALUES (?,?,?,?,?)", (rowid, text, namespace, node_id, kind))
    db.execute("INSERT OR REPLACE INTO fts_rows (namespace, node_id, fts_rowid) VALUES (?,?,?)",
               (namespace, node_id, rowid))


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements (no semicolons inside our string literals)."""
    lines = [ln for ln in script.splitlines() if not ln.strip().startswith("--")]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
