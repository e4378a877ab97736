"""Copy a store into another (SQLite → PostgreSQL and back), verified table by table.

    from enfold.store import open_store
    from enfold.store.migrate import migrate
    report = migrate(open_store("enfold.db"), open_store("postgresql://…/enfold"))

Every row of every per-namespace table (:data:`~enfold.store.base.TABLES`: the event log,
nodes, edges, vectors, aliases, op log, cursors, meta, embedding cache, API keys) is copied
as it is — ids, sequence numbers and timestamps included — one namespace per target
transaction. Derived indexes (full-text search) are rebuilt by the target. Leases are
not copied: they belong to running workers.

Verification reads every table back from the target and compares, per table and
namespace, the row count and a checksum: SHA-256 over the sorted SHA-256 of each row's
canonical JSON (numbers of real-valued columns as floats, bytes as hex), so it does not
depend on row order or on how a backend returns a type. Any difference raises
:class:`~enfold.errors.StoreError` naming the table and namespace.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from enfold.errors import InputError, StoreError
from enfold.store.base import TABLES, KeyStore, RowStore

# Columns stored as real numbers: SQLite may hand back an int that was stored as one.
_REAL = {"created_at", "updated_at", "last_access", "weight", "at", "revoked_at"}
# The tables that make a namespace "not empty" in the target.
_CONTENT = ("events", "nodes", "oplog", "cursors", "api_keys")


@dataclass(frozen=True)
class TableCheck:
    """One table of one namespace, as found in the source and in the target."""

    namespace: str
    table: str
    rows: int
    checksum: str


@dataclass
class MigrationReport:
    source: str
    target: str
    tables: list[TableCheck] = field(default_factory=list)

    @property
    def rows(self) -> int:
        return sum(t.rows for t in self.tables)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "target": self.target, "rows": self.rows,
                "tables": [t.__dict__ for t in self.tables]}


def _canonical(table: str, row: Sequence[Any]) -> bytes:
    out: list[Any] = []
    for col, value in zip(TABLES[table], row, strict=True):
        if isinstance(value, bytes | bytearray | memoryview):
            out.append({"bytes": bytes(value).hex()})
        elif col in _REAL and value is not None:
            out.append(float(value))
        else:
            out.append(value)
    return json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()


def checksum(table: str, rows: Iterable[Sequence[Any]]) -> str:
    """An order-independent checksum of a table's rows."""
    digests = sorted(hashlib.sha256(_canonical(table, r)).digest() for r in rows)
    return hashlib.sha256(b"".join(digests)).hexdigest()


def source_namespaces(store: RowStore) -> list[str]:
    """Every namespace with data or API keys."""
    names = set(store.namespaces())
    if isinstance(store, KeyStore):
        names |= {k.namespace for k in store.list_api_keys()}
    return sorted(names)


def migrate(source: RowStore, target: RowStore, *, namespaces: Iterable[str] | None = None
            ) -> MigrationReport:
    """Copy ``namespaces`` (default: all) from ``source`` into ``target``, where they must
    be empty, and verify the copy; returns the per-table counts and checksums."""
    if source.url == target.url:
        raise InputError("source and target are the same store")
    names = sorted(set(namespaces)) if namespaces is not None else source_namespaces(source)
    busy = [ns for ns in names if any(target.dump_rows(t, ns) for t in _CONTENT)]
    if busy:
        raise InputError(f"target already has data in namespace(s) {', '.join(busy)}: "
                         "migrate into empty namespaces")
    report = MigrationReport(source.url, target.url)
    for ns in names:
        dumped = {t: source.dump_rows(t, ns) for t in TABLES}
        with target.transaction():
            for table, rows in dumped.items():
                target.load_rows(table, rows)
        report.tables.extend(verify(dumped, target, ns))
    return report


def verify(expected: dict[str, list[tuple[Any, ...]]], target: RowStore, namespace: str
           ) -> list[TableCheck]:
    """Compare every table of ``namespace`` in ``target`` with the rows it should hold."""
    checks = []
    for table, rows in expected.items():
        want = TableCheck(namespace, table, len(rows), checksum(table, rows))
        got_rows = target.dump_rows(table, namespace)
        got = TableCheck(namespace, table, len(got_rows), checksum(table, got_rows))
        if got != want:
            raise StoreError(f"copy of {table!r} in namespace {namespace!r} does not match: "
                             f"{want.rows} rows ({want.checksum[:12]}) in the source, "
                             f"{got.rows} ({got.checksum[:12]}) in the target")
        checks.append(got)
    return checks
