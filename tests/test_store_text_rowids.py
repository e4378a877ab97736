"""The text index's rowids carry their node's kind (migration 0009): a search passes over the
rows of other kinds without reading their stored columns, and a store of the earlier layout
is carried over with every search answering as before."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from enfold import Memory
from enfold.embed import HashingEmbedder
from enfold.model import NodeKind
from enfold.store.sqlite import KIND_BITS, KIND_CODES, SQLiteStore

_DERIVED = [NodeKind.CONCEPT, NodeKind.FACT, NodeKind.CLAIM, NodeKind.INTENT]
_QUERIES = ["garden roses", "what does Maya think about the garden", "kiln", "roses Tom"]


def _fill(path: Path) -> None:
    with Memory.open(path, embedder=HashingEmbedder(), planner="local") as mem:
        for i in range(60):
            who = ("Maya", "Tom", "Priya")[i % 3]
            topic = ("garden roses", "pottery kiln", "marathon training")[i % 3 if i % 7 else 0]
            mem.add(f"{who} thinks the {topic} is going well, note {i}", source=who)
        for i in range(5):
            mem.add(f"Maya wants to finish the {('garden', 'kiln')[i % 2]} by Friday")


def _answers(store: SQLiteStore) -> list[list[tuple[str, float]]]:
    return [store.search_text("default", q, kinds, 20, max_rows=rows)
            for q in _QUERIES for kinds in ([NodeKind.EVENT], _DERIVED, None)
            for rows in (None, 8)]


def test_each_row_s_rowid_carries_its_kind(tmp_path: Path) -> None:
    _fill(tmp_path / "m.db")
    db = sqlite3.connect(tmp_path / "m.db")
    rows = db.execute("SELECT rowid, kind FROM node_text").fetchall()
    assert {kind for _, kind in rows} >= {"event", "concept", "claim"}
    assert all(rowid & ((1 << KIND_BITS) - 1) == KIND_CODES[kind] for rowid, kind in rows)
    mapped = dict(db.execute("SELECT node_id, fts_rowid FROM fts_rows").fetchall())
    assert mapped == dict(db.execute("SELECT node_id, rowid FROM node_text").fetchall())


def test_a_search_for_derived_nodes_reads_no_event_s_columns(tmp_path: Path) -> None:
    _fill(tmp_path / "m.db")
    store = SQLiteStore(str(tmp_path / "m.db"))
    found = store.search_text("default", "garden roses going well", _DERIVED, 5)
    assert found  # the claims of the notes
    read = {kind for _, kind, _ in store._labels.values()}
    assert read and "event" not in read
    assert store.search_text("default", "garden roses going well", _DERIVED, 5) == \
        store._search_text_reference("default", "garden roses going well", _DERIVED, 5)


def test_a_search_for_derived_nodes_scores_no_event_row(tmp_path: Path) -> None:
    """BM25 is computed only for rows of the asked kinds (SQLite tests the rowid first);
    the scores are the whole index's, so the answer is the reference's."""
    _fill(tmp_path / "m.db")
    store = SQLiteStore(str(tmp_path / "m.db"))
    query = "what does Maya think about the garden"
    assert store.search_text("default", query, _DERIVED, 5) == \
        store._search_text_reference("default", query, _DERIVED, 5)
    scored = [rowid for rows, _ in store._hits.values() for rowid, _ in rows]
    derived = {KIND_CODES[k.value] for k in _DERIVED}
    assert scored and {rowid & ((1 << KIND_BITS) - 1) for rowid in scored} <= derived
    events = store.search_text("default", query, [NodeKind.EVENT], 5)
    assert events == store._search_text_reference("default", query, [NodeKind.EVENT], 5)


def test_a_store_of_the_earlier_layout_answers_as_before(tmp_path: Path) -> None:
    path = tmp_path / "m.db"
    _fill(path)
    with Memory.open(path, embedder=HashingEmbedder(), planner="local") as mem:
        gone = mem.store.search_text("default", "note", [NodeKind.EVENT], 3)
        for node_id, _ in gone:  # gaps in the row numbers, a deleted row among them
            mem.forget(node_id)
    store = SQLiteStore(str(path))
    before = _answers(store)
    store.close()
    # Back to the layout before 0009: rowids without the kind, in the same order.
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE VIRTUAL TABLE node_fts USING fts5(
            text, namespace UNINDEXED, node_id UNINDEXED, kind UNINDEXED,
            tokenize = 'porter unicode61');
        INSERT INTO node_fts (rowid, text, namespace, node_id, kind)
            SELECT rowid >> 4, text, namespace, node_id, kind FROM node_text;
        UPDATE fts_rows SET fts_rowid = fts_rowid >> 4;
        DROP TABLE node_text;
        DELETE FROM migrations WHERE name = '0009_text_kind_rowids.sql';
    """)
    db.close()
    store = SQLiteStore(str(path))  # migrates
    assert _answers(store) == before
    raw = sqlite3.connect(path)
    assert dict(raw.execute("SELECT node_id, fts_rowid FROM fts_rows").fetchall()) == \
        dict(raw.execute("SELECT node_id, rowid FROM node_text").fetchall())
    raw.close()
    with Memory(store, embedder=HashingEmbedder()) as mem:
        mem.add("a new note about garden roses")
    store = SQLiteStore(str(path))
    assert any("new note" in (store.get_node("default", i).text or "")  # type: ignore[union-attr]
               for i, _ in store.search_text("default", "new note", [NodeKind.EVENT], 3))
    db = sqlite3.connect(path)
    assert db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'node_fts'"
                      ).fetchone()[0] == 0  # code from before cannot write to the index
    assert all(rowid & 15 == KIND_CODES[kind]
               for rowid, kind in db.execute("SELECT rowid, kind FROM node_text"))
