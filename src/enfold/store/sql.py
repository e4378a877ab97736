"""What the two SQL backends share: the queries that read the same tables the same way.

:class:`SQLiteStore <enfold.store.sqlite.SQLiteStore>` and
:class:`PostgresStore <enfold.store.postgres.PostgresStore>` keep the same tables and
columns. Where a statement is the same in both dialects it is written once here, with ``?``
placeholders that :meth:`SqlStore._sql` turns into the backend's own (``%s`` for psycopg);
an event's time, which each database reads from the JSON attributes its own way, is the
backend's :attr:`SqlStore._TS`. What differs (transactions, locking, text search, writes
of the graph, leases) stays in each backend module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any, ClassVar

import numpy as np

from enfold.errors import StoreError
from enfold.model import Node, NodeKind, OpRecord
from enfold.store.base import EMBEDDER_KEY, ApiKey, Fence, Fences, Token

__all__ = ["KEY_COLS", "NODE_COLS", "OP_COLS", "TOKEN_SQL", "SqlStore"]

NODE_COLS = ("namespace, id, kind, text, attrs, created_at, updated_at, last_access, "
             "access_count, plan_id")
OP_COLS = "seq, plan_id, op, target, before, after, reasoning, at, peer"
KEY_COLS = "id, namespace, key_hash, label, created_at, revoked_at"
#: A namespace's change token (version, folding cursor); parameters: the namespace twice.
TOKEN_SQL = ("SELECT (SELECT version FROM graph_versions WHERE namespace = ?), "
             "(SELECT seq FROM cursors WHERE namespace = ?)")
# the node columns of the joined ``nodes n``
_N_COLS = ", ".join("n." + c.strip() for c in NODE_COLS.split(","))


def token_of(row: Sequence[Any] | None) -> Token:
    """The change token of a :data:`TOKEN_SQL` row (absent parts are 0)."""
    assert row is not None  # (a SELECT of two subqueries always returns its row)
    return int(row[0] or 0), int(row[1] or 0)


class SqlStore:
    """The shared half of a SQL backend. A backend sets :attr:`_PARAM` and :attr:`_TS` and
    gives :meth:`_q` (rows of one statement) and :meth:`_tx` (one write transaction)."""

    #: the driver's placeholder
    _PARAM: ClassVar[str] = "?"
    #: an event's time in SQL over ``nodes n``: its ``ts`` attribute, else its creation
    _TS: ClassVar[str]
    _NODE_COLS: ClassVar[str] = NODE_COLS

    dtype: np.dtype[Any]
    _fences: Fences

    def _q(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        raise NotImplementedError

    def _tx(self, *, durable: bool = True) -> AbstractContextManager[Any]:
        raise NotImplementedError

    def _sql(self, sql: str) -> str:
        """A statement written with ``?`` placeholders, in the driver's."""
        return sql if self._PARAM == "?" else sql.replace("?", self._PARAM)

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[Any]:
        return self._q(self._sql(sql), args)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Group several store calls into one atomic transaction (they nest as savepoints)."""
        with self._tx():
            yield

    def migrations(self) -> list[str]:
        return [r[0] for r in self._q("SELECT name FROM migrations ORDER BY name")]

    # ------------------------------------------------------------ rows
    @staticmethod
    def _row_node(r: Sequence[Any], grounded_in: Sequence[str] = ()) -> Node:
        return Node(
            namespace=r[0], id=r[1], kind=NodeKind(r[2]), text=r[3], attrs=json.loads(r[4]),
            grounded_in=tuple(grounded_in), created_at=r[5], updated_at=r[6],
            last_access=r[7], access_count=r[8], plan_id=r[9],
        )

    def _blob(self, vec: np.ndarray) -> tuple[int, str, bytes]:
        """A vector as (its dimension, dtype, bytes); a matrix (an event's vector and its
        passages' rows, see WorkingGraph.set_vector) as its rows one after another."""
        v = np.asarray(vec, dtype=self.dtype)
        return int(v.shape[-1]), self.dtype.name, v.reshape(-1).tobytes()

    @staticmethod
    def _unblob(dim: int, dtype: str, data: bytes) -> np.ndarray:
        v = np.frombuffer(data, dtype=np.dtype(dtype)).astype(np.float32)
        if v.shape[0] == dim:
            return v
        if dim <= 0 or v.shape[0] % dim:
            raise StoreError(f"a stored vector of {v.shape[0]} values is not rows of {dim}")
        return v.reshape(-1, dim)

    @staticmethod
    def _ops(namespace: str, rows: list[Any]) -> list[OpRecord]:
        return [OpRecord(namespace, int(r[0]), r[1], r[2], r[3],
                         None if r[4] is None else json.loads(r[4]),
                         None if r[5] is None else json.loads(r[5]), r[6], r[7], r[8])
                for r in rows]

    # ------------------------------------------------------- event log
    def events_after(self, namespace: str, seq: int, limit: int) -> list[Node]:
        rows = self._rows(
            f"SELECT {_N_COLS} FROM events e JOIN nodes n ON n.namespace = e.namespace "
            "AND n.id = e.id WHERE e.namespace = ? AND e.seq > ? ORDER BY e.seq LIMIT ?",
            (namespace, seq, limit),
        )
        return [self._row_node(r) for r in rows]

    def events_by_time(self, namespace: str, *, since: float | None = None,
                       until: float | None = None, after: tuple[float, int] | None = None,
                       limit: int = 100) -> list[Node]:
        ts = self._TS
        where = ["e.namespace = ?"]
        args: list[Any] = [namespace]
        if since is not None:
            where.append(f"{ts} >= ?")
            args.append(since)
        if until is not None:
            where.append(f"{ts} < ?")
            args.append(until)
        if after is not None:
            where.append(f"({ts} > ? OR ({ts} = ? AND e.seq > ?))")
            args += [after[0], after[0], after[1]]
        rows = self._rows(
            f"SELECT {_N_COLS} FROM events e JOIN nodes n ON n.namespace = e.namespace "
            f"AND n.id = e.id WHERE {' AND '.join(where)} ORDER BY {ts}, e.seq LIMIT ?",
            (*args, limit),
        )
        return [self._row_node(r) for r in rows]

    def last_seq(self, namespace: str) -> int:
        return int(self._rows(
            "SELECT COALESCE(MAX(seq), 0) FROM events WHERE namespace = ?", (namespace,)
        )[0][0])

    def get_cursor(self, namespace: str) -> int:
        rows = self._rows("SELECT seq FROM cursors WHERE namespace = ?", (namespace,))
        return int(rows[0][0]) if rows else 0

    def change_token(self, namespace: str) -> Token:
        return token_of(self._rows(TOKEN_SQL, (namespace, namespace))[0])

    def fenced(self, namespace: str, fence: Fence) -> AbstractContextManager[Fence]:
        return self._fences.hold(namespace, fence)

    # ------------------------------------------------------------ graph
    def resolve_alias(self, namespace: str, node_id: str) -> str | None:
        rows = self._rows("SELECT new_id FROM aliases WHERE namespace = ? AND old_id = ?",
                          (namespace, node_id))
        return rows[0][0] if rows else None

    def oplog(self, namespace: str) -> list[OpRecord]:
        return self._ops(namespace, self._rows(
            f"SELECT {OP_COLS} FROM oplog WHERE namespace = ? ORDER BY seq", (namespace,)))

    def namespaces(self) -> list[str]:
        rows = self._q("SELECT namespace FROM nodes UNION SELECT namespace FROM cursors "
                       "ORDER BY 1")
        return [r[0] for r in rows]

    # ------------------------------------------------------------ meta
    def cache_models(self, namespace: str) -> list[str]:
        """The embedders that have vectors in the namespace's embedding cache."""
        return [r[0] for r in self._rows(
            "SELECT DISTINCT model FROM embed_cache WHERE namespace = ?", (namespace,))]

    def get_meta(self, namespace: str, key: str) -> Any:
        rows = self._rows("SELECT value FROM meta WHERE namespace = ? AND key = ?",
                          (namespace, key))
        return json.loads(rows[0][0]) if rows else None

    def vector_spaces(self) -> dict[str, tuple[str | None, int]]:
        out: dict[str, tuple[str | None, int]] = {}
        for ns, value in self._rows("SELECT namespace, value FROM meta WHERE key = ?",
                                    (EMBEDDER_KEY,)):
            record = json.loads(value)
            out[ns] = (str(record["name"]), int(record["dim"]))
        for ns in self.namespaces():
            if ns not in out:
                rows = self._rows("SELECT dim FROM vectors WHERE namespace = ? LIMIT 1", (ns,))
                if rows:
                    out[ns] = (None, int(rows[0][0]))
        return out

    # -------------------------------------------------------- API keys
    def create_api_key(self, key: ApiKey) -> None:
        with self._tx() as conn:
            conn.execute(self._sql(f"INSERT INTO api_keys ({KEY_COLS}) VALUES (?,?,?,?,?,?)"),
                         (key.id, key.namespace, key.key_hash, key.label, key.created_at,
                          key.revoked_at))

    def get_api_key(self, key_id: str) -> ApiKey | None:
        rows = self._rows(f"SELECT {KEY_COLS} FROM api_keys WHERE id = ?", (key_id,))
        return ApiKey(*rows[0]) if rows else None

    def list_api_keys(self, namespace: str | None = None) -> list[ApiKey]:
        if namespace is None:
            rows = self._q(f"SELECT {KEY_COLS} FROM api_keys ORDER BY created_at, id")
        else:
            rows = self._rows(f"SELECT {KEY_COLS} FROM api_keys WHERE namespace = ? "
                              "ORDER BY created_at, id", (namespace,))
        return [ApiKey(*r) for r in rows]
