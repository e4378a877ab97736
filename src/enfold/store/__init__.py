"""Storage backends behind one protocol, chosen by URL.

``open_store("memory.db")`` or ``"sqlite:///memory.db"`` — the SQLite file store (default);
``"memory:"`` — an in-process store (SQLite in memory, same behaviour, nothing on disk);
``"postgresql://…"`` — PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path

from enfold.errors import ConfigError
from enfold.store.base import Appended, EventRecord, GraphSnapshot, Store

__all__ = ["Appended", "EventRecord", "GraphSnapshot", "Store", "open_store"]


def open_store(target: str | Path, *, dtype: str = "float32") -> Store:
    """Open (creating if needed) the store that ``target`` names."""
    url = str(target)
    if url in ("memory:", ":memory:"):
        from enfold.store.sqlite import SQLiteStore

        return SQLiteStore(":memory:", url="memory:", dtype=dtype)
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from enfold.store.postgres import PostgresStore
        except ImportError as exc:
            raise ConfigError(
                "the PostgreSQL backend needs the extra: pip install 'enfold[postgres]'"
            ) from exc
        store: Store = PostgresStore(url, dtype=dtype)
        return store
    if "://" in url and not url.startswith("sqlite://"):
        raise ConfigError(f"unknown store URL {url!r} (use a path, sqlite:///…, memory: "
                          "or postgresql://…)")
    path = url.removeprefix("sqlite:///")
    if not path:
        raise ConfigError("empty SQLite path")
    from enfold.store.sqlite import SQLiteStore

    return SQLiteStore(path, url=f"sqlite:///{path}", dtype=dtype)
