"""The Store contract on both backends, and what only PostgreSQL has to get right.

Contract tests take ``store_url`` and run once on a SQLite file and once on a fresh
PostgreSQL database (tests/conftest.py starts a throwaway cluster). The PostgreSQL-only
tests cover what several processes sharing one database depend on: dense sequence numbers
under concurrent appends, lease take-over, the folding-cursor fence, migrations racing.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from importlib import resources
from typing import Any

import numpy as np
import pytest

from enfold.errors import InputError, StoreError
from enfold.graph import ChangeSet
from enfold.memory import Memory
from enfold.model import Edge, EdgeType, Node, NodeKind, OpRecord, content_hash, new_id
from enfold.store import open_store
from enfold.store.base import ApiKey, EventRecord, Store

TS = 1_700_000_000.0


def event(ns: str, text: str, *, ext: str | None = None, ts: float = TS) -> EventRecord:
    node = Node(id=new_id(NodeKind.EVENT), namespace=ns, kind=NodeKind.EVENT, text=text,
                attrs={"ts": ts, "source": None, "external_id": ext}, created_at=ts,
                updated_at=ts, last_access=ts)
    return EventRecord(node, content_hash(text, None, ts), ext)


@pytest.fixture
def store(store_url: str) -> Iterator[Store]:
    s = open_store(store_url)
    yield s
    s.close()


# ------------------------------------------------------------------ the contract
def test_append_is_idempotent_by_external_id_and_content_hash(store: Store) -> None:
    a = store.append_events("A", [event("A", "ran 10k", ext="x1"), event("A", "booked"),
                                  event("A", "booked")])
    assert [x.created for x in a] == [True, True, False]
    assert a[2].id == a[1].id and [x.seq for x in a] == [1, 2, 2]
    again = store.append_events("A", [event("A", "edited text", ext="x1"), event("A", "booked"),
                                      event("A", "new one")])
    assert [(x.id, x.created) for x in again[:2]] == [(a[0].id, False), (a[1].id, False)]
    assert again[2].created and again[2].seq == 3
    # Namespaces are independent logs.
    b = store.append_events("B", [event("B", "booked")])
    assert b[0].created and b[0].seq == 1
    evs = store.events_after("A", 1, 10)
    assert [e.attrs["seq"] for e in evs] == [2, 3] and evs[0].text == "booked"
    assert store.last_seq("A") == 3 and store.get_cursor("A") == 0
    assert store.namespaces() == ["A", "B"]


def test_commit_and_load_graph_round_trip(store: Store) -> None:
    ev = store.append_events("A", [event("A", "went running with Sam in the park"),
                                   event("A", "chess on Thursday")])
    concept = Node(id="co_1", namespace="A", kind=NodeKind.CONCEPT, text="Running",
                   attrs={"summary": "jogging routine", "keywords": ["run", "jog"], "x": 0.1},
                   grounded_in=(ev[0].id,), created_at=TS, updated_at=TS, last_access=TS,
                   access_count=2, plan_id="pl_1")
    cs = ChangeSet()
    cs.nodes["co_1"] = concept
    edge = Edge("A", ev[0].id, "co_1", EdgeType.GROUNDS, 0.5, TS, TS, "pl_1")
    cs.edges[edge.key] = edge
    cs.vectors["co_1"] = np.arange(8, dtype=np.float32) / 7
    cs.aliases["co_old"] = "co_1"
    cs.meta["pagerank"] = {"co_1": 0.25}
    cs.ops.append(OpRecord("A", 0, "pl_1", "ADD_NODE", "co_1", None, {"text": "Running"},
                           "because", TS))
    store.commit("A", cs, cursor=1)
    snap = store.load_graph("A")
    assert {n.id for n in snap.nodes} == {ev[0].id, "co_1"}, "unfolded event hidden"
    assert len(store.load_graph("A", folded_only=False).nodes) == 3
    assert next(n for n in snap.nodes if n.id == "co_1") == concept
    assert snap.edges == [edge]
    assert [i for i, _ in snap.vectors] == ["co_1"]
    np.testing.assert_array_equal(snap.vectors[0][1], cs.vectors["co_1"])
    assert snap.aliases == [("co_old", "co_1")] and snap.meta == [("pagerank", {"co_1": 0.25})]
    assert store.resolve_alias("A", "co_old") == "co_1"
    assert store.get_meta("A", "pagerank") == {"co_1": 0.25}
    hist = store.history("A", "co_1")
    assert [(h.seq, h.op, h.after) for h in hist] == [(1, "ADD_NODE", {"text": "Running"})]
    c = store.counts("A")
    assert (c["events"], c["folded"], c["cursor"], c["last_seq"]) == (2, 1, 1, 2)
    assert c["nodes"] == {"event": 2, "concept": 1} and c["edges"] == {"GROUNDS": 1}
    # Lexical search sees text and keywords/summary, filtered by kind, best first.
    hits = store.search_text("A", "jogging routine", [NodeKind.CONCEPT], 5)
    assert [h for h, _ in hits] == ["co_1"]
    ranked = store.search_text("A", "running Sam park", None, 5)
    assert ranked[0][0] == ev[0].id and ranked[0][1] > ranked[-1][1] or len(ranked) == 1
    assert store.search_text("A", "!!!", None, 5) == []
    # Deleting a node removes it, its vector and (for an event) its log entry.
    gone = ChangeSet()
    gone.nodes["co_1"] = None
    gone.nodes[ev[1].id] = None
    store.commit("A", gone)
    assert store.get_node("A", "co_1") is None and store.last_seq("A") == 1
    assert store.load_graph("A", folded_only=False).vectors == []
    assert store.search_text("A", "jogging", None, 5) == []


def test_transaction_is_atomic_and_nests(store: Store) -> None:
    with pytest.raises(RuntimeError), store.transaction():
        store.append_events("A", [event("A", "one")])
        raise RuntimeError("boom")
    assert store.last_seq("A") == 0
    with store.transaction():
        store.append_events("A", [event("A", "kept")])
        with pytest.raises(RuntimeError), store.transaction():
            store.append_events("A", [event("A", "rolled back")])
            raise RuntimeError("inner")
        store.append_events("A", [event("A", "kept too")])
    assert [e.text for e in store.events_after("A", 0, 10)] == ["kept", "kept too"]


def test_wipe_takes_one_namespace(store: Store) -> None:
    for ns in ("A", "B"):
        store.append_events(ns, [event(ns, "x")])
        store.cache_vectors(ns, "hash", [("h1", np.ones(4, np.float32))])
    store.wipe("A")
    assert store.last_seq("A") == 0 and store.cached_vectors("A", "hash", ["h1"]) == {}
    assert store.last_seq("B") == 1 and set(store.cached_vectors("B", "hash", ["h1"])) == {"h1"}
    assert store.namespaces() == ["B"]


def test_embedding_cache(store: Store) -> None:
    v = np.linspace(-1, 1, 6).astype(np.float32)
    store.cache_vectors("A", "m1", [("h1", v), ("h2", 2 * v)])
    got = store.cached_vectors("A", "m1", ["h1", "h2", "h3"])
    assert set(got) == {"h1", "h2"}
    np.testing.assert_array_equal(got["h2"], 2 * v)
    assert store.cached_vectors("A", "m2", ["h1"]) == {}
    assert store.cached_vectors("A", "m1", []) == {}


def test_leases_exclude_renew_and_expire(store: Store) -> None:
    assert store.try_lease("A", "w1", 0.5)
    assert not store.try_lease("A", "w2", 0.5), "a live lease is exclusive"
    assert store.try_lease("B", "w2", 0.5), "leases are per namespace"
    assert store.try_lease("A", "w1", 0.5), "the holder renews"
    time.sleep(0.7)
    assert store.try_lease("A", "w2", 5), "an expired lease is taken over"
    assert not store.try_lease("A", "w1", 5)
    store.release_lease("A", "w1")  # not the holder: no effect
    assert not store.try_lease("A", "w1", 5)
    store.release_lease("A", "w2")
    assert store.try_lease("A", "w1", 5)


def test_api_keys(store: Store) -> None:
    keys: Any = store
    keys.create_api_key(ApiKey("k1", "A", "ab" * 32, "bot", TS))
    keys.create_api_key(ApiKey("k2", "B", "cd" * 32, None, TS + 1))
    assert keys.get_api_key("k1") == ApiKey("k1", "A", "ab" * 32, "bot", TS)
    assert [k.id for k in keys.list_api_keys()] == ["k1", "k2"]
    assert [k.id for k in keys.list_api_keys("B")] == ["k2"]
    assert keys.revoke_api_key("k1", TS + 5) and not keys.revoke_api_key("k1", TS + 6)
    assert keys.get_api_key("k1").revoked_at == TS + 5 and keys.get_api_key("nope") is None


def test_memory_add_fold_recall_forget_on_the_backend(store_url: str) -> None:
    with Memory.open(store_url, embedder="hash", planner="local") as m:
        ids = [m.add(t, ts=TS + 3600 * i, source=s) for i, (s, t) in enumerate([
            ("Maya", "Went running in the park with Sam this morning"),
            ("Sam", "Booked a hotel in Vienna for the concert"),
            ("Maya", "Ran 10k along the river, felt great"),
            ("Maya", "I need to renew my passport by Friday")])]
        s = m.stats()
        assert s["events"] == s["folded"] == 4 and s["nodes"].get("person", 0) >= 2
        pack = m.recall("when did Maya go running?")
        assert {e.id for e in pack.evidence[:2]} & {ids[0], ids[2]}
        assert m.forget(ids[1])
        assert m.stats()["events"] == 3
    with Memory.open(store_url, embedder="hash", planner="local") as m:  # reopen
        assert m.stats()["events"] == 3 and m.stats()["pending"] == 0
        assert m.get(ids[0]).text.startswith("Went running")


# ------------------------------------------------------------- PostgreSQL only
def test_concurrent_appends_keep_the_log_dense(pg_url: str) -> None:
    """Eight threads (eight pooled connections) append to one namespace at once, with
    overlapping texts: every text is stored once and sequence numbers have no gap."""
    store = open_store(pg_url)
    errors: list[BaseException] = []

    def writer(w: int) -> None:
        try:
            for i in range(25):
                store.append_events("A", [event("A", f"t{(w * 7 + i) % 60}"),
                                          event("A", f"w{w} i{i}")])
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(w,)) for w in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    evs = store.events_after("A", 0, 10_000)
    assert [e.attrs["seq"] for e in evs] == list(range(1, len(evs) + 1))
    texts = [e.text for e in evs]
    assert len(texts) == len(set(texts)) == 60 + 8 * 25
    store.close()


def test_cursor_only_moves_forward(pg_url: str) -> None:
    """The fence against a worker whose lease expired mid-fold: re-folding an event that
    another worker already folded fails and leaves nothing behind."""
    store = open_store(pg_url)
    store.append_events("A", [event("A", "a"), event("A", "b")])
    store.commit("A", ChangeSet(), cursor=1)
    store.commit("A", ChangeSet(), cursor=2)
    stale = ChangeSet()
    stale.meta["late"] = True
    for cursor in (1, 2):
        with pytest.raises(StoreError, match="already at 2"):
            store.commit("A", stale, cursor=cursor)
    assert store.get_meta("A", "late") is None and store.get_cursor("A") == 2
    store.close()


def test_migrations_race_and_are_recorded_once(pg_url: str) -> None:
    stores: list[Any] = []
    errors: list[BaseException] = []

    def opener() -> None:
        try:
            stores.append(open_store(pg_url))
        except BaseException as exc:  # noqa: BLE001 - surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=opener) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    folder = resources.files("enfold.store") / "migrations" / "postgres"
    names = sorted(e.name for e in folder.iterdir() if e.name.endswith(".sql"))
    assert names[:4] == ["0001_initial.sql", "0002_provenance.sql", "0003_oplog_peer.sql",
                         "0004_drop_edges_by_dst.sql"]
    assert stores[0].migrations() == names
    for s in stores:
        s.close()


def test_search_scores_like_sqlite(pg_url: str, tmp_path: Any) -> None:
    """Both backends score with FTS5's BM25 (same stemming, IDF, length normalisation): on
    a one-namespace corpus PostgreSQL returns the same matches with the same scores."""
    corpus = [f"{a} {b}" for a in ("running in the park", "hotel in Vienna", "passport renewal",
                                   "chess club evening", "river run 10k")
              for b in ("with Sam", "on Friday", "again and again the same", "")]
    results = []
    for url in (str(tmp_path / "s.db"), pg_url):
        s = open_store(url)
        s.append_events("A", [event("A", t, ts=TS + i) for i, t in enumerate(corpus)])
        by_text = {n.id: n.text for n in s.events_after("A", 0, 100)}
        results.append([{by_text[i]: score for i, score in s.search_text("A", q, None, 100)}
                        for q in ("park running", "the Vienna hotel", "Sam passport",
                                  "again river", "10k")])
        s.close()
    for lite, pg in zip(*results):
        assert lite.keys() == pg.keys()
        for text, score in lite.items():
            assert pg[text] == pytest.approx(score, rel=1e-6), text


def test_url_password_is_redacted_and_nul_refused(pg_url: str) -> None:
    from enfold.store.postgres import redact

    assert redact("postgresql://u:secret@h:5432/db") == "postgresql://u:***@h:5432/db"
    store = open_store(pg_url)
    with pytest.raises(InputError, match="NUL"):
        store.append_events("A", [event("A", "bad \x00 text")])
    assert store.last_seq("A") == 0
    store.close()


def test_unreachable_server_is_a_store_error() -> None:
    with pytest.raises(StoreError, match="cannot open PostgreSQL store"):
        open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=1")


def test_sqlite_store_from_before_the_provenance_table_keeps_provenance(tmp_path) -> None:
    """A store written before migration 0004 kept provenance as a JSON list in the node's
    row; opening it moves every list into the provenance table, in order."""
    import json
    import sqlite3
    from importlib import resources

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    folder = resources.files("enfold.store") / "migrations" / "sqlite"
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for name in ("0001_initial.sql", "0002_fts_rowids.sql", "0003_keys_leases.sql"):
        db.executescript((folder / name).read_text(encoding="utf-8"))
        db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
    db.execute("INSERT INTO nodes (namespace, id, kind, text, attrs, grounded_in, created_at, "
               "updated_at, last_access, access_count, plan_id) VALUES "
               "('A', 'co_1', 'concept', 'Running', '{}', ?, 0, 0, 0, 0, NULL)",
               (json.dumps(["ev_3", "ev_1", "ev_2"]),))
    db.commit()
    db.close()
    store = open_store(str(path))
    try:
        node = store.get_node("A", "co_1")
        assert node is not None and node.grounded_in == ("ev_3", "ev_1", "ev_2")
        assert [n.grounded_in for n in store.load_graph("A").nodes] == [("ev_3", "ev_1", "ev_2")]
    finally:
        store.close()


def test_sqlite_store_from_before_rowid_vector_tables_keeps_its_vectors(tmp_path) -> None:
    """Migration 0005 moves vectors and cached embeddings out of WITHOUT ROWID tables
    (where each spilled into an overflow page); every row survives, and new vectors are
    stored without overflow pages."""
    import sqlite3
    from importlib import resources

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    folder = resources.files("enfold.store") / "migrations" / "sqlite"
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for name in ("0001_initial.sql", "0002_fts_rowids.sql", "0003_keys_leases.sql",
                 "0004_provenance.sql"):
        db.executescript((folder / name).read_text(encoding="utf-8"))
        db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
    vec = np.arange(384, dtype=np.float32)
    db.execute("INSERT INTO nodes (namespace, id, kind, text, attrs, created_at, updated_at, "
               "last_access, access_count, plan_id) VALUES "
               "('A', 'co_1', 'concept', 'Running', '{}', 0, 0, 0, 0, NULL)")
    db.execute("INSERT INTO vectors VALUES ('A', 'co_1', 384, 'float32', ?)", (vec.tobytes(),))
    db.execute("INSERT INTO embed_cache VALUES ('A', 'm', 'h1', ?)", (vec.tobytes(),))
    db.commit()
    db.close()
    store = open_store(str(path))
    try:
        assert "0005_vector_rows.sql" in store.migrations()  # type: ignore[attr-defined]
        snap = store.load_graph("A")
        assert [(i, v.tolist()) for i, v in snap.vectors] == [("co_1", vec.tolist())]
        assert store.cached_vectors("A", "m", ["h1"])["h1"].tolist() == vec.tolist()
        cs = ChangeSet()
        for i in range(50):
            cs.vectors[f"co_{i}"] = vec + i
        store.commit("A", cs)
        overflow = store._q(  # type: ignore[attr-defined]
            "SELECT count(*) FROM dbstat WHERE name = 'vectors' AND pagetype = 'overflow'")
        assert overflow[0][0] == 0
    finally:
        store.close()


def test_sqlite_store_from_before_single_edge_records_keeps_its_history(tmp_path) -> None:
    """Migration 0006 adds the op log's ``peer``: records written before it (an edge under
    each end) still make each end's history, and new edge records appear in both."""
    import json
    import sqlite3
    from importlib import resources

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    folder = resources.files("enfold.store") / "migrations" / "sqlite"
    db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at REAL)")
    for name in ("0001_initial.sql", "0002_fts_rowids.sql", "0003_keys_leases.sql",
                 "0004_provenance.sql", "0005_vector_rows.sql"):
        db.executescript((folder / name).read_text(encoding="utf-8"))
        db.execute("INSERT INTO migrations VALUES (?, 0)", (name,))
    edge = json.dumps({"src": "pe_1", "dst": "ev_1", "type": "PARTICIPATES", "weight": 0.5})
    for seq, target in ((1, "pe_1"), (2, "ev_1")):
        db.execute("INSERT INTO oplog VALUES ('A', ?, 'pl_1', 'ADD_EDGE', ?, NULL, ?, 'r', 0)",
                   (seq, target, edge))
    db.commit()
    db.close()
    store = open_store(str(path))
    try:
        assert "0006_oplog_peer.sql" in store.migrations()  # type: ignore[attr-defined]
        assert [(r.seq, r.peer) for r in store.history("A", "pe_1")] == [(1, None)]
        assert [(r.seq, r.peer) for r in store.history("A", "ev_1")] == [(2, None)]
        cs = ChangeSet()
        cs.ops.append(OpRecord("A", 0, "pl_2", "ADD_EDGE", "pe_1", None, {"weight": 1.0},
                               "r", 1.0, "ev_1"))
        store.commit("A", cs)
        assert [r.seq for r in store.history("A", "pe_1")] == [1, 3]
        assert [r.seq for r in store.history("A", "ev_1")] == [2, 3]
    finally:
        store.close()


def test_folding_commits_asynchronously_and_appends_do_not(pg_url: str, monkeypatch) -> None:
    """A change set written with ``durable=False`` (folding, consolidation) commits with
    ``synchronous_commit`` off; a durable one, an append, and a non-durable one inside a
    caller's durable transaction keep the server's level."""
    from enfold.store import postgres

    seen: list[str] = []
    real = postgres.PostgresStore._lock

    def spy(conn: Any, namespace: str, seed: int) -> None:
        seen.append(conn.execute("SELECT current_setting('synchronous_commit')").fetchone()[0])
        real(conn, namespace, seed)

    monkeypatch.setattr(postgres.PostgresStore, "_lock", staticmethod(spy))
    store = open_store(pg_url)
    store.append_events("A", [event("A", "a"), event("A", "b")])
    appended, seen[:] = list(seen), []
    store.commit("A", ChangeSet(), cursor=1, durable=False)
    store.commit("A", ChangeSet(), cursor=2)
    with store.transaction():  # (a change set that writes nothing commits nothing)
        store.commit("A", ChangeSet(meta={"k": 1}), durable=False)
    assert seen == ["off", "on", "on"]
    assert appended and "off" not in appended
    store.close()


def test_word_weights_are_the_idf_bm25_uses_on_both_backends(pg_url: str, tmp_path: Any
                                                             ) -> None:
    """The ``cover`` feature weighs a question's words by the store's own IDF: a word few
    events hold weighs more than a common one, a word none holds most; both backends give
    the same weights on one namespace's corpus (FTS5's formula, the same stemming)."""
    corpus = [f"{a} {b}" for a in ("running in the park", "hotel in Vienna", "passport renewal",
                                   "chess club evening", "river run 10k")
              for b in ("with Sam", "on Friday", "again and again", "")]
    asked = ["Passport", "running", "Friday", "zeppelin", "runs", "_"]
    got = []
    for url in (str(tmp_path / "w.db"), pg_url):
        s = open_store(url)
        assert s.word_weights("A", []) == {}
        s.append_events("A", [event("A", t, ts=TS + i) for i, t in enumerate(corpus)])
        w = s.word_weights("A", asked)
        s.close()
        assert set(w) == {"passport", "running", "friday", "zeppelin", "runs", "_"}
        assert w["_"] == 0.0  # no term of the index: nothing matches it
        assert w["zeppelin"] > w["passport"] > w["running"] > 0  # held by 0, 4 and 8 events
        assert w["passport"] == pytest.approx(np.log((20 - 4 + 0.5) / (4 + 0.5)))
        assert w["runs"] == w["running"]  # one stem: "run" (and "river run 10k")
        got.append(w)
    for word, weight in got[0].items():
        assert got[1][word] == pytest.approx(weight, rel=1e-6), word
