"""The PostgreSQL backend: several processes or hosts on one database.

psycopg 3 with a connection pool; the same tables and columns as the SQLite backend, with
named migrations of their own (``migrations/postgres``), full-text search by PostgreSQL's
own text search (a ``tsvector`` per node, a GIN index, BM25 scoring in SQL) and vectors as
``bytea`` (float32, or float16 with the setting).

Concurrency, since several workers share the database:

- appends to a namespace's event log are serialised by a transaction-level advisory lock
  on the namespace (sequence numbers stay dense, idempotency checks race-free);
- graph commits take a second per-namespace advisory lock (op-log sequence); a fenced
  commit (see :mod:`enfold.store.base`) is refused unless the namespace's change token is
  still the one its working graph was loaded at, and one that advances the folding cursor
  is refused unless it moves the cursor forward — the fences that keep a worker whose
  lease ran out from folding an event twice or writing from a stale graph;
- recall's access statistics are increments (``touch``), never rows from a cache;
- namespace leases are rows (owner, expiry in the database's clock) taken over atomically
  by ``INSERT … ON CONFLICT … WHERE expired``.

:meth:`PostgresStore.transaction` groups calls on one pooled connection (per thread);
nested transactions become savepoints. All SQL of this backend lives here; psycopg errors
are translated into :class:`enfold.errors.StoreError` at this seam.
"""

from __future__ import annotations

import json
import math
import re
import threading
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import numpy as np
import psycopg
from psycopg_pool import ConnectionPool

from enfold.changeset import ChangeSet
from enfold.errors import InputError, StaleGraph, StoreError
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
)
from enfold.store.sql import NODE_COLS, OP_COLS, TOKEN_SQL, SqlStore, token_of

_WORD = re.compile(r"\w+", re.UNICODE)
_MIGRATION_LOCK = 0x656E666F6C64  # "enfold": one migrator at a time across processes
_APPEND_LOCK_SEED = 1  # per-namespace advisory-lock keys: hashtextextended(ns, seed)
_GRAPH_LOCK_SEED = 2
_PG_TOKEN_SQL = TOKEN_SQL.replace("?", "%s")
# BM25 constants and IDF as SQLite's FTS5 bm25() has them (so both backends rank alike).
_K1 = 1.2
_B = 0.75

# Access statistics only grow: a node written from a working graph that missed another
# process's touch keeps the stored count and time (see touch).
_NODE_UPDATE = ", ".join(f"{c} = GREATEST(nodes.{c}, EXCLUDED.{c})"
                         if c in ("access_count", "last_access") else f"{c} = EXCLUDED.{c}"
                         for c in [*(c.strip() for c in NODE_COLS.split(",")[2:]), "tlen",
                                   "tsv"])

# Rank a namespace's nodes for a tsquery by BM25: term frequencies from the tsvector's
# positions, document frequencies among the matching nodes, N and the average length over
# the namespace (an index-only scan of nodes_by_length).
_SEARCH_SQL = f"""
WITH q AS (SELECT to_tsquery('enfold', %(tsq)s) AS tq),
terms AS (SELECT DISTINCT unnest(tsvector_to_array(to_tsvector('enfold', %(text)s))) AS lex),
cand AS (
    SELECT n.id, n.tsv, greatest(n.tlen, 1)::float8 AS dl
    FROM nodes n, q
    WHERE n.namespace = %(ns)s AND n.tsv @@ q.tq AND (%(kinds)s::text[] IS NULL
          OR n.kind = ANY(%(kinds)s::text[]))
),
hits AS (
    SELECT c.id, c.dl, u.lexeme,
           coalesce(array_length(u.positions, 1), 1)::float8 AS tf
    FROM cand c CROSS JOIN LATERAL unnest(c.tsv) AS u
    JOIN terms t ON t.lex = u.lexeme
),
df AS (SELECT lexeme, count(*)::float8 AS n FROM hits GROUP BY lexeme),
stats AS (
    SELECT count(*)::float8 AS total, greatest(avg(tlen), 1)::float8 AS avgdl
    FROM nodes WHERE namespace = %(ns)s
)
SELECT h.id,
       sum(greatest(ln((stats.total - df.n + 0.5) / (df.n + 0.5)), 1e-6)
           * h.tf * {_K1 + 1} / (h.tf + {_K1} * (1 - {_B} + {_B} * h.dl / stats.avgdl))) AS s
FROM hits h JOIN df USING (lexeme) CROSS JOIN stats
GROUP BY h.id
ORDER BY s DESC, h.id
LIMIT %(limit)s
"""


# Each word's count of the namespace's nodes whose text holds it, the namespace's nodes, and
# whether the word has a lexeme at all (a stop word has none).
_WORD_DF_SQL = """
WITH total AS (SELECT count(*) AS n FROM nodes WHERE namespace = %(ns)s)
SELECT w.word,
       (SELECT count(*) FROM nodes n WHERE n.namespace = %(ns)s
                                        AND n.tsv @@ plainto_tsquery('enfold', w.word)),
       total.n,
       numnode(plainto_tsquery('enfold', w.word)) > 0
FROM unnest(%(words)s::text[]) AS w(word) CROSS JOIN total
"""

def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def redact(url: str) -> str:
    """The URL without its password (what ``stats()`` and logs may show)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    user = f"{parts.username}:***@" if parts.username else ""
    return urlunsplit(parts._replace(netloc=user + host))


def ts_query(text: str) -> str | None:
    """A safe tsquery for free text: every word quoted, OR-ed. None when no words."""
    words = _WORD.findall(text.lower())
    if not words:
        return None
    return " | ".join(f"'{w}'" for w in list(dict.fromkeys(words))[:64])


class PostgresStore(SqlStore):
    """A :class:`~enfold.store.base.Store` on one PostgreSQL database."""

    _PARAM = "%s"
    _TS = "COALESCE((n.attrs::jsonb ->> 'ts')::double precision, n.created_at)"

    def __init__(self, url: str, *, dtype: str = "float32", pool_size: int = 8,
                 timeout: float = 30.0) -> None:
        self.url = redact(url)
        self.shared = True
        self.dtype = np.dtype(dtype)
        self.embedder_name: str | None = None
        self._local = threading.local()
        self._fences = Fences()
        try:  # one direct attempt first: a wrong URL fails at once with the server's reason
            psycopg.connect(url, connect_timeout=int(timeout)).close()
            self._pool = ConnectionPool(
                url, min_size=1, max_size=pool_size, timeout=timeout, open=False,
                kwargs={"autocommit": True}, check=ConnectionPool.check_connection,
                name="enfold")
            self._pool.open(wait=True, timeout=timeout)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open PostgreSQL store {self.url!r}: {exc}") from exc
        try:
            self._migrate()
        except BaseException:
            self._pool.close()
            raise

    # ----------------------------------------------------------- plumbing
    def sidecar(self, namespace: str, name: str) -> Path | None:
        """None: a server has no place beside it on this machine."""
        return None

    def close(self) -> None:
        self._pool.close()

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """This thread's connection inside a transaction, else one from the pool."""
        held: psycopg.Connection[Any] | None = getattr(self._local, "conn", None)
        if held is not None:
            yield held
            return
        try:
            with self._pool.connection() as conn:
                self._local.conn = conn
                try:
                    yield conn
                finally:
                    self._local.conn = None
        except psycopg.Error as exc:
            raise StoreError(f"PostgreSQL: {exc}") from exc

    @contextmanager
    def _tx(self, *, durable: bool = True) -> Iterator[psycopg.Connection[Any]]:
        """One transaction (or a savepoint inside the thread's open one).

        One that is not durable commits asynchronously: the server may lose it in a crash,
        with every commit after it and none before (a synchronous commit flushes the WAL up
        to itself). A savepoint follows its transaction.
        """
        nested = getattr(self._local, "conn", None) is not None
        mark = self._fences.mark()
        with self._conn() as conn:
            try:
                with conn.transaction():
                    if not durable and not nested:
                        conn.execute("SET LOCAL synchronous_commit TO OFF")
                    yield conn
            except BaseException as exc:
                self._fences.discard(mark)
                if isinstance(exc, psycopg.Error):
                    raise StoreError(f"PostgreSQL: {exc}") from exc
                raise
            if not nested:
                self._fences.settle()

    def _q(self, sql: str, args: Sequence[Any] | dict[str, Any] = ()) -> list[Any]:
        with self._conn() as conn:
            try:
                return conn.execute(sql.encode(), args).fetchall()
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL: {exc}") from exc

    @staticmethod
    def _lock(conn: psycopg.Connection[Any], namespace: str, seed: int) -> None:
        """A per-namespace advisory lock held until the transaction ends."""
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))",
                     (namespace, seed))

    def _migrate(self) -> None:
        folder = resources.files("enfold.store") / "migrations" / "postgres"
        scripts = sorted((e for e in folder.iterdir() if e.name.endswith(".sql")),
                         key=lambda p: p.name)
        with self._tx() as conn:
            # Workers starting together: one migrates, the others wait and find it done.
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute("CREATE TABLE IF NOT EXISTS migrations "
                         "(name TEXT PRIMARY KEY, applied_at DOUBLE PRECISION)")
            done = {r[0] for r in conn.execute("SELECT name FROM migrations")}
            for entry in scripts:
                if entry.name in done:
                    continue
                conn.execute(entry.read_text(encoding="utf-8").encode())
                conn.execute("INSERT INTO migrations (name, applied_at) VALUES (%s, %s)",
                             (entry.name, now()))

    # ------------------------------------------------------------ rows
    @staticmethod
    def _node_row(n: Node, search: str) -> tuple[Any, ...]:
        return (
            n.namespace, n.id, n.kind.value, _text(n.text), _dumps(dict(n.attrs)),
            n.created_at, n.updated_at, n.last_access, n.access_count, n.plan_id,
            len(_WORD.findall(search)), _text(search),
        )

    @staticmethod
    def _provenance(rows: Iterable[Sequence[Any]]) -> dict[str, list[str]]:
        """(node id, event id) rows in order → provenance lists by node."""
        out: dict[str, list[str]] = {}
        for nid, eid in rows:
            out.setdefault(nid, []).append(eid)
        return out

    _NODE_INSERT = (f"INSERT INTO nodes ({NODE_COLS}, tlen, tsv) VALUES "
                    "(%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s, to_tsvector('enfold', %s))")

    # ------------------------------------------------------- event log
    def append_events(self, namespace: str, events: Sequence[EventRecord]) -> list[Appended]:
        out: list[Appended] = []
        with self._tx() as conn:
            self._lock(conn, namespace, _APPEND_LOCK_SEED)
            by_ext, by_hash = self._known(conn, namespace, events)
            last = int(conn.execute(
                "SELECT COALESCE(MAX(seq), 0) FROM events WHERE namespace = %s", (namespace,)
            ).fetchone()[0])  # type: ignore[index]
            event_rows: list[tuple[Any, ...]] = []
            node_rows: list[tuple[Any, ...]] = []
            for rec in events:
                known = by_ext.get(rec.external_id) if rec.external_id is not None else None
                known = known or by_hash.get(rec.content_hash)
                if known is not None:
                    out.append(Appended(known[0], known[1], False))
                    continue
                last = max(last + 1, rec.seq or 0)
                node = rec.node.with_changes(attrs={**rec.node.attrs, "seq": last})
                event_rows.append((namespace, last, node.id, rec.content_hash, rec.external_id))
                node_rows.append(self._node_row(node, node.text))
                by_hash[rec.content_hash] = (node.id, last)
                if rec.external_id is not None:
                    by_ext[rec.external_id] = (node.id, last)
                out.append(Appended(node.id, last, True))
            with conn.cursor() as cur:
                if event_rows:
                    cur.executemany("INSERT INTO events (namespace, seq, id, content_hash, "
                                    "external_id) VALUES (%s,%s,%s,%s,%s)", event_rows)
                    cur.executemany(self._NODE_INSERT, node_rows)
        return out

    @staticmethod
    def _known(conn: psycopg.Connection[Any], namespace: str, events: Sequence[EventRecord]
               ) -> tuple[dict[str, tuple[str, int]], dict[str, tuple[str, int]]]:
        """The already-logged events among ``events``, by external id and by content hash."""
        exts = [e.external_id for e in events if e.external_id is not None]
        hashes = [e.content_hash for e in events]
        by_ext = {r[0]: (r[1], int(r[2])) for r in conn.execute(
            "SELECT external_id, id, seq FROM events WHERE namespace = %s "
            "AND external_id = ANY(%s)", (namespace, exts))} if exts else {}
        by_hash = {r[0]: (r[1], int(r[2])) for r in conn.execute(
            "SELECT content_hash, id, seq FROM events WHERE namespace = %s "
            "AND content_hash = ANY(%s)", (namespace, hashes))}
        return by_ext, by_hash

    # ------------------------------------------------------------ graph
    def load_graph(self, namespace: str, *, folded_only: bool = True) -> GraphSnapshot:
        with self._tx() as conn:  # one snapshot of every table
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            token = token_of(conn.execute(_PG_TOKEN_SQL, (namespace, namespace)).fetchone())
            cursor = token[1]
            prov = self._provenance(conn.execute(
                "SELECT node_id, event_id FROM provenance WHERE namespace = %s "
                "ORDER BY node_id, pos", (namespace,)))
            nodes = [self._row_node(r, prov.get(r[1], ())) for r in conn.execute(
                f"SELECT {NODE_COLS} FROM nodes WHERE namespace = %s", (namespace,))]
            if folded_only:
                nodes = [n for n in nodes if n.kind is not NodeKind.EVENT
                         or int(n.attrs.get("seq", 0)) <= cursor]
            keep = {n.id for n in nodes}
            edges = [Edge(namespace, r[0], r[2], EdgeType(r[1]), r[3], r[4], r[5], r[6])
                     for r in conn.execute(
                         "SELECT src, type, dst, weight, created_at, updated_at, plan_id "
                         "FROM edges WHERE namespace = %s", (namespace,))]
            vectors = [(r[0], self._unblob(r[1], r[2], r[3])) for r in conn.execute(
                "SELECT node_id, dim, dtype, data FROM vectors WHERE namespace = %s",
                (namespace,)) if r[0] in keep]
            aliases = [(r[0], r[1]) for r in conn.execute(
                "SELECT old_id, new_id FROM aliases WHERE namespace = %s", (namespace,))]
            meta = [(r[0], json.loads(r[1])) for r in conn.execute(
                "SELECT key, value FROM meta WHERE namespace = %s AND key != %s",
                (namespace, EMBEDDER_KEY))]
        return GraphSnapshot(nodes, edges, vectors, aliases, meta, token)

    def commit(self, namespace: str, changes: ChangeSet, *, cursor: int | None = None,
               durable: bool = True) -> None:
        if cursor is None and changes.empty():
            return
        fence = self._fences.get(namespace)
        with self._tx(durable=durable) as conn, conn.cursor() as cur:
            self._lock(conn, namespace, _GRAPH_LOCK_SEED)
            token = token_of(cur.execute(_PG_TOKEN_SQL, (namespace, namespace)).fetchone())
            expected = self._fences.expected(fence)
            check_fence(namespace, expected, token)
            if cursor is not None:
                self._fence(namespace, token[1], cursor)
            self._commit_nodes(cur, namespace, changes)
            self._commit_rest(cur, namespace, changes)
            if cursor is not None:
                cur.execute("INSERT INTO cursors (namespace, seq) VALUES (%s, %s) "
                            "ON CONFLICT (namespace) DO UPDATE SET seq = EXCLUDED.seq",
                            (namespace, cursor))
            # (under the namespace's graph lock since the token was read: nobody moved it)
            cur.execute("INSERT INTO graph_versions (namespace, version) VALUES (%s, %s) "
                        "ON CONFLICT (namespace) DO UPDATE SET version = EXCLUDED.version",
                        (namespace, token[0] + 1))
            if fence is not None and expected is not None:
                self._fences.advance(fence, (token[0] + 1, token[1] if cursor is None
                                             else cursor))

    def touch(self, namespace: str, node_ids: Sequence[str], at: float) -> None:
        counts = Counter(node_ids)
        if not counts:
            return
        with self._tx(durable=False) as conn, conn.cursor() as cur:
            # Under the graph lock: a touch and a commit never lock the same rows in
            # opposite orders (a deadlock would fail one of them).
            self._lock(conn, namespace, _GRAPH_LOCK_SEED)
            cur.executemany("UPDATE nodes SET access_count = access_count + %s, last_access = "
                            "GREATEST(last_access, %s) WHERE namespace = %s AND id = %s",
                            [(counts[i], at, namespace, i) for i in sorted(counts)])

    @staticmethod
    def _fence(namespace: str, stored: int, cursor: int) -> None:
        """Refuse to fold an event twice: the cursor only moves forward (a worker whose
        lease ran out while another folded the same events fails here and rolls back)."""
        if cursor < stored or (cursor == stored and cursor > 0):
            raise StaleGraph(f"folding cursor of {namespace!r} is already at {stored}: "
                             f"refusing to set it to {cursor} (folded by another worker)")

    def _commit_nodes(self, cur: psycopg.Cursor[Any], namespace: str, changes: ChangeSet
                      ) -> None:
        gone = [i for i, n in changes.nodes.items() if n is None]
        if gone:
            cur.execute("DELETE FROM events WHERE namespace = %s AND id = ANY(%s) AND id IN "
                        "(SELECT id FROM nodes WHERE namespace = %s AND kind = %s)",
                        (namespace, gone, namespace, NodeKind.EVENT.value))
            cur.execute("DELETE FROM nodes WHERE namespace = %s AND id = ANY(%s)",
                        (namespace, gone))
            cur.execute("DELETE FROM vectors WHERE namespace = %s AND node_id = ANY(%s)",
                        (namespace, gone))
        rows = []
        for node_id, node in changes.nodes.items():
            if node is None:
                continue
            if node.namespace != namespace:
                raise StoreError(f"node {node_id} belongs to {node.namespace!r}")
            rows.append(self._node_row(node, fts_text(node)))
        if rows:
            cur.executemany(f"{self._NODE_INSERT} ON CONFLICT (namespace, id) DO UPDATE SET "
                            f"{_NODE_UPDATE}", rows)
        reset, prov_rows = changes.provenance_writes()
        if reset:
            cur.execute("DELETE FROM provenance WHERE namespace = %s AND node_id = ANY(%s)",
                        (namespace, reset))
        if prov_rows:
            cur.executemany(
                "INSERT INTO provenance (namespace, node_id, pos, event_id) VALUES "
                "(%s,%s,%s,%s) ON CONFLICT (namespace, node_id, pos) DO UPDATE SET "
                "event_id = EXCLUDED.event_id", [(namespace, *r) for r in prov_rows])

    def _commit_rest(self, cur: psycopg.Cursor[Any], namespace: str, changes: ChangeSet
                     ) -> None:
        gone_edges = [(namespace, s, t.value, d) for (s, t, d), e in changes.edges.items()
                      if e is None]
        if gone_edges:
            cur.executemany("DELETE FROM edges WHERE namespace = %s AND src = %s AND type = %s "
                            "AND dst = %s", gone_edges)
        edges = [(namespace, s, t.value, d, e.weight, e.created_at, e.updated_at, e.plan_id)
                 for (s, t, d), e in changes.edges.items() if e is not None]
        if edges:
            cur.executemany(
                "INSERT INTO edges (namespace, src, type, dst, weight, created_at, updated_at, "
                "plan_id) VALUES (%s,%s,%s,%s,%s,%s,%s,%s) ON CONFLICT (namespace, src, type, "
                "dst) DO UPDATE SET weight = EXCLUDED.weight, created_at = EXCLUDED.created_at,"
                " updated_at = EXCLUDED.updated_at, plan_id = EXCLUDED.plan_id", edges)
        gone_vecs = [i for i, v in changes.vectors.items() if v is None]
        if gone_vecs:
            cur.execute("DELETE FROM vectors WHERE namespace = %s AND node_id = ANY(%s)",
                        (namespace, gone_vecs))
        vecs = [(namespace, i, *self._blob(v)) for i, v in changes.vectors.items()
                if v is not None]
        if vecs:
            cur.executemany(
                "INSERT INTO vectors (namespace, node_id, dim, dtype, data) VALUES "
                "(%s,%s,%s,%s,%s) ON CONFLICT (namespace, node_id) DO UPDATE SET "
                "dim = EXCLUDED.dim, dtype = EXCLUDED.dtype, data = EXCLUDED.data", vecs)
        if changes.aliases:
            cur.executemany(
                "INSERT INTO aliases (namespace, old_id, new_id) VALUES (%s,%s,%s) "
                "ON CONFLICT (namespace, old_id) DO UPDATE SET new_id = EXCLUDED.new_id",
                [(namespace, o, n) for o, n in changes.aliases.items()])
        if changes.purge_history:
            cur.execute("DELETE FROM oplog WHERE namespace = %s AND (target = ANY(%s) OR "
                        "peer = ANY(%s))", (namespace, list(changes.purge_history),
                                            list(changes.purge_history)))
        if changes.purge_cache:
            cur.execute("DELETE FROM embed_cache WHERE namespace = %s AND hash = ANY(%s)",
                        (namespace, list(changes.purge_cache)))
        if changes.ops:
            seq = int(cur.execute("SELECT COALESCE(MAX(seq), 0) FROM oplog WHERE namespace "
                                  "= %s", (namespace,)).fetchone()[0])  # type: ignore[index]
            cur.executemany(
                "INSERT INTO oplog (namespace, seq, plan_id, op, target, before, after, "
                "reasoning, at, peer) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                [(namespace, seq + i, op.plan_id, op.op, op.target,
                  None if op.before is None else _dumps(op.before),
                  None if op.after is None else _dumps(op.after), _text(op.reasoning), op.at,
                  op.peer)
                 for i, op in enumerate(changes.ops, 1)])
        if changes.meta:
            cur.executemany(
                "INSERT INTO meta (namespace, key, value) VALUES (%s,%s,%s) ON CONFLICT "
                "(namespace, key) DO UPDATE SET value = EXCLUDED.value",
                [(namespace, k, _dumps(v)) for k, v in changes.meta.items()])
        if vecs and self.embedder_name is not None:  # the namespace's first ones record it
            cur.execute("INSERT INTO meta (namespace, key, value) VALUES (%s,%s,%s) "
                        "ON CONFLICT (namespace, key) DO NOTHING",
                        (namespace, EMBEDDER_KEY,
                         _dumps({"name": self.embedder_name, "dim": vecs[0][2]})))

    def get_node(self, namespace: str, node_id: str) -> Node | None:
        rows = self._q(f"SELECT {NODE_COLS} FROM nodes WHERE namespace = %s AND id = %s",
                       (namespace, node_id))
        if not rows:
            return None
        prov = self._provenance(self._q(
            "SELECT node_id, event_id FROM provenance WHERE namespace = %s AND node_id = %s "
            "ORDER BY pos", (namespace, node_id)))
        return self._row_node(rows[0], prov.get(node_id, ()))

    _OP_SELECT = (f"SELECT {OP_COLS} "
                  "FROM oplog WHERE namespace = %s")

    def history(self, namespace: str, node_id: str) -> list[OpRecord]:
        return self._ops(namespace, self._q(
            f"{self._OP_SELECT} AND target = %s UNION ALL {self._OP_SELECT} AND peer = %s "
            "ORDER BY seq", (namespace, node_id, namespace, node_id)))

    def search_text(
        self, namespace: str, query: str, kinds: Iterable[NodeKind] | None, limit: int,
        *, max_rows: int | None = None,
    ) -> list[tuple[str, float]]:
        """Ranked by ts_rank over every matching row (``max_rows`` is not applied here)."""
        tsq = ts_query(query)
        if tsq is None:
            return []
        kind_list = [k.value for k in kinds] if kinds is not None else None
        rows = self._q(_SEARCH_SQL, {"tsq": tsq, "text": " ".join(_WORD.findall(query)),
                                     "ns": namespace, "kinds": kind_list, "limit": limit})
        return [(r[0], float(r[1])) for r in rows]

    def word_weights(self, namespace: str, words: Iterable[str]) -> dict[str, float]:
        """Each word's inverse document frequency by FTS5's formula
        (``ln((N - n + 0.5) / (n + 0.5))``, at least 1e-6), ``n`` the namespace's nodes of
        any kind whose text holds it and ``N`` all its nodes (:data:`_SEARCH_SQL` counts
        among the searched kinds' matches); 0 for a word the text search configuration
        drops (a stop word: no search matches it). One statement, not cached."""
        listed = [w.lower() for w in dict.fromkeys(words) if w]
        if not listed:
            return {}
        rows = self._q(_WORD_DF_SQL, {"ns": namespace, "words": listed})
        out: dict[str, float] = {}
        for word, n, total, terms in rows:
            out[word] = (max(math.log((float(total) - float(n) + 0.5) / (float(n) + 0.5)),
                             1e-6) if terms else 0.0)
        return out

    # -------------------------------------------------------- namespaces
    def counts(self, namespace: str) -> dict[str, Any]:
        with self._tx() as conn:
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            nodes = {r[0]: int(r[1]) for r in conn.execute(
                "SELECT kind, COUNT(*) FROM nodes WHERE namespace = %s GROUP BY kind",
                (namespace,))}
            edges = {r[0]: int(r[1]) for r in conn.execute(
                "SELECT type, COUNT(*) FROM edges WHERE namespace = %s GROUP BY type",
                (namespace,))}
            crow = conn.execute("SELECT seq FROM cursors WHERE namespace = %s",
                                (namespace,)).fetchone()
            cursor = int(crow[0]) if crow else 0
            ev = conn.execute(
                "SELECT COUNT(*), COUNT(*) FILTER (WHERE seq <= %s), COALESCE(MAX(seq), 0) "
                "FROM events WHERE namespace = %s", (cursor, namespace)).fetchone()
            assert ev is not None
        return {"events": int(ev[0]), "folded": int(ev[1]), "last_seq": int(ev[2]),
                "cursor": cursor, "nodes": nodes, "edges": edges}

    def wipe(self, namespace: str) -> None:
        with self._tx() as conn:
            self._lock(conn, namespace, _APPEND_LOCK_SEED)
            self._lock(conn, namespace, _GRAPH_LOCK_SEED)
            for table in ("nodes", "provenance", "events", "edges", "vectors", "aliases",
                          "oplog", "cursors", "meta", "embed_cache"):
                conn.execute(f"DELETE FROM {table} WHERE namespace = %s".encode(),
                             (namespace,))

    # Tables whose deleted rows held an event's words or its embedding.
    _ERASE_TABLES = ("nodes", "oplog", "events", "vectors", "embed_cache")

    def erase_deleted(self) -> bool:
        """Reclaim the space of deleted rows (after a forget or a wipe) with VACUUM; false:
        PostgreSQL does not let a client erase them from its files.

        A deleted or updated row's old version stays in its table's pages until VACUUM
        reclaims the space, which cannot run inside a transaction: it runs here, after the
        forget's transaction, on a connection of its own (it takes no lock that blocks
        reads or writes, and skips the pages with no dead rows). It makes the space
        reusable, not zero: the bytes stay in the page until a new row overwrites them, a
        GIN index keeps a lexeme's key once it has no rows, and the write-ahead log,
        archives, replicas and backups keep their copies. Only a rewrite of the tables
        (VACUUM FULL, which locks them) removes the first two; see docs/forgetting.md.
        """
        if getattr(self._local, "conn", None) is not None:
            raise StoreError("erase_deleted() cannot run inside a transaction (VACUUM)")
        with self._conn() as conn:
            try:
                conn.execute(f"VACUUM {', '.join(self._ERASE_TABLES)}".encode())
            except psycopg.Error as exc:
                raise StoreError(f"PostgreSQL: {exc}") from exc
        return False

    def event_words(self, namespace: str, words: Iterable[str], *, exclude: str
                    ) -> set[str]:
        """Which of ``words`` (lowercase) the text of an event other than ``exclude`` holds
        as a whole word: the text index finds candidates, a regular expression checks."""
        listed = list(dict.fromkeys(words))
        if not listed:
            return set()
        rows = self._q(
            "SELECT w FROM unnest(%s::text[]) AS w WHERE EXISTS (SELECT 1 FROM nodes n "
            "WHERE n.namespace = %s AND n.kind = 'event' AND n.id <> %s "
            "AND n.tsv @@ plainto_tsquery('enfold', w) "
            "AND lower(n.text) ~ ('(^|[^[:alnum:]_])' || w || '($|[^[:alnum:]_])'))",
            (listed, namespace, exclude))
        return {r[0] for r in rows}

    def history_matching(self, namespace: str, node_ids: Iterable[str],
                         probes: Sequence[str]) -> list[OpRecord]:
        """The op-log records of these nodes (as target or peer) whose before, after or
        reasoning contains one of ``probes`` (lowercase, compared without case), oldest
        first: a superset for the caller to check."""
        ids = list(dict.fromkeys(node_ids))
        if not probes or not ids:
            return []
        return self._ops(namespace, self._q(
            f"{self._OP_SELECT} AND (target = ANY(%s) OR peer = ANY(%s)) AND EXISTS ("
            "SELECT 1 FROM unnest(%s::text[]) AS p WHERE strpos(lower(coalesce(before, '') "
            "|| ' ' || coalesce(after, '') || ' ' || reasoning), p) > 0) ORDER BY seq",
            (namespace, ids, ids, list(probes))))

    def redact_ops(self, namespace: str, records: Sequence[OpRecord]) -> None:
        """Rewrite the payload (before, after, reasoning) of these op records, by seq."""
        if not records:
            return
        with self._tx() as conn, conn.cursor() as cur:
            cur.executemany(
                "UPDATE oplog SET before = %s, after = %s, reasoning = %s "
                "WHERE namespace = %s AND seq = %s",
                [(None if r.before is None else _dumps(r.before),
                  None if r.after is None else _dumps(r.after), _text(r.reasoning),
                  namespace, r.seq) for r in records])

    def drop_aliases(self, namespace: str, old_ids: Iterable[str]) -> None:
        """Delete merge aliases (of ids merged into a node that is gone)."""
        ids = list(old_ids)
        if ids:
            with self._tx() as conn:
                conn.execute("DELETE FROM aliases WHERE namespace = %s AND old_id = ANY(%s)",
                             (namespace, ids))

    # ---------------------------------------------------- embedding cache
    def cached_vectors(
        self, namespace: str, model: str, hashes: Sequence[str]
    ) -> dict[str, np.ndarray]:
        if not hashes:
            return {}
        rows = self._q("SELECT hash, data FROM embed_cache WHERE namespace = %s AND model = %s "
                       "AND hash = ANY(%s)", (namespace, model, list(hashes)))
        return {h: np.frombuffer(data, dtype=np.float32).copy() for h, data in rows}

    def cache_vectors(
        self, namespace: str, model: str, items: Sequence[tuple[str, np.ndarray]]
    ) -> None:
        if not items:
            return
        with self._tx(durable=False) as conn, conn.cursor() as cur:  # a cache
            cur.executemany(
                "INSERT INTO embed_cache (namespace, model, hash, data) VALUES (%s,%s,%s,%s) "
                "ON CONFLICT (namespace, model, hash) DO UPDATE SET data = EXCLUDED.data",
                [(namespace, model, h, np.asarray(v, dtype=np.float32).tobytes())
                 for h, v in items])

    # ----------------------------------------------------- namespace leases
    def try_lease(self, namespace: str, owner: str, ttl_s: float) -> bool:
        """Acquire, renew or take over an expired lease in one statement; the expiry is in
        the database server's clock, so workers on hosts with skewed clocks agree. Leases
        are transient (a lost one lapses by itself): committed asynchronously."""
        with self._tx(durable=False) as conn:
            rows = conn.execute(
                "INSERT INTO leases AS l (namespace, owner, expires_at) VALUES "
                "(%s, %s, extract(epoch FROM clock_timestamp()) + %s) "
                "ON CONFLICT (namespace) DO UPDATE SET owner = EXCLUDED.owner, "
                "expires_at = EXCLUDED.expires_at WHERE l.owner = EXCLUDED.owner "
                "OR l.expires_at <= extract(epoch FROM clock_timestamp()) RETURNING l.owner",
                (namespace, owner, float(ttl_s))).fetchall()
        return bool(rows)

    def release_lease(self, namespace: str, owner: str) -> None:
        with self._tx(durable=False) as conn:
            conn.execute("DELETE FROM leases WHERE namespace = %s AND owner = %s",
                         (namespace, owner))

    def lease_owner(self, namespace: str) -> str | None:
        """Who holds the namespace's lease now (None: nobody, or it expired)."""
        rows = self._q("SELECT owner FROM leases WHERE namespace = %s AND expires_at > "
                       "extract(epoch FROM clock_timestamp())", (namespace,))
        return rows[0][0] if rows else None

    def take_over_lease(self, namespace: str, owner: str, ttl_s: float, previous: str) -> bool:
        with self._tx(durable=False) as conn:
            rows = conn.execute(
                "UPDATE leases SET owner = %s, expires_at = extract(epoch FROM "
                "clock_timestamp()) + %s WHERE namespace = %s AND owner = %s RETURNING owner",
                (owner, float(ttl_s), namespace, previous)).fetchall()
        return bool(rows)

    # ------------------------------------------------------------- API keys
    def revoke_api_key(self, key_id: str, at: float) -> bool:
        rows = self._q("UPDATE api_keys SET revoked_at = %s WHERE id = %s AND revoked_at IS "
                       "NULL RETURNING id", (at, key_id))
        return bool(rows)

    # ------------------------------------------------- raw rows (migrate)
    def dump_rows(self, table: str, namespace: str) -> list[tuple[Any, ...]]:
        """A namespace's rows of one of :data:`~enfold.store.base.TABLES`, in column order."""
        cols = TABLES[table]
        rows = self._q(f"SELECT {', '.join(cols)} FROM {table} WHERE namespace = %s",
                       (namespace,))
        return [tuple(bytes(v) if isinstance(v, memoryview) else v for v in r) for r in rows]

    def load_rows(self, table: str, rows: Sequence[tuple[Any, ...]]) -> None:
        """Insert raw rows (``dump_rows`` of another store); derived indexes follow."""
        if not rows:
            return
        cols = TABLES[table]
        marks = ", ".join(["%s"] * len(cols))
        sql = f"INSERT INTO {table} ({', '.join(cols)}) VALUES ({marks})"
        data: list[tuple[Any, ...]] = [tuple(_text(v) if isinstance(v, str) else v for v in r)
                                       for r in rows]
        if table == "nodes":
            sql = self._NODE_INSERT
            data = [self._node_row(n, fts_text(n)) for n in map(self._row_node, data)]
        with self._tx() as conn, conn.cursor() as cur:
            cur.executemany(sql.encode(), data)



def _text(value: str) -> str:
    """PostgreSQL text cannot hold NUL characters: refuse them with a clear error."""
    if "\x00" in value:
        raise InputError("text containing NUL characters cannot be stored in PostgreSQL")
    return value
