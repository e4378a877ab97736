"""forget() and wipe() (SPEC §9): an event is deleted with everything derived from it —
provenance retracted, nodes left ungrounded removed, people and time anchors left without
edges removed, op log of removed nodes erased (one FORGET record stays), embedding-cache
entry removed — and a wipe takes one namespace and nothing else.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from enfold import (
    AddEdge,
    AddNode,
    EdgeType,
    MergeNodes,
    NodeKind,
    NotFound,
    Settings,
    UpdatePlan,
)
from enfold.graph import WorkingGraph
from enfold.memory import Memory
from enfold.store import open_store
from enfold.write.fold import text_hash

TS = 1_700_000_000
SECRET = "Zanzibar-7 password is hunter2"


def export_text(m: Memory, ns: str) -> str:
    buf = io.StringIO()
    m.export(buf, namespace=ns)
    return buf.getvalue()


def raw_rows(db: str | Path, table: str, ns: str) -> list[tuple[Any, ...]]:
    """The stored rows of a table, read through a fresh connection of either backend."""
    store: Any = open_store(db)
    try:
        return list(store.dump_rows(table, ns))
    finally:
        store.close()


def oplog_text(db: str | Path, ns: str) -> str:
    # op, target, before, after, reasoning
    return json.dumps([r[3:8] for r in raw_rows(db, "oplog", ns)])


def cache_hashes(db: str | Path, ns: str) -> set[str]:
    return {r[2] for r in raw_rows(db, "embed_cache", ns)}


def assert_reload_equal(m: Memory, db: str | Path, ns: str = "default") -> None:
    g = m.graph(ns)
    m2 = Memory.open(db, namespace=ns, planner=None, embedder=None)
    try:
        h = m2.graph(ns)
        assert {i: n.to_dict() for i, n in g.nodes.items()} == \
               {i: n.to_dict() for i, n in h.nodes.items()}
        assert {e.key: e.to_dict() for e in g.all_edges()} == \
               {e.key: e.to_dict() for e in h.all_edges()}
        assert g.aliases == h.aliases
        ids = set(g.event_vectors.ids()) | set(g.node_vectors.ids())
        assert ids == set(h.event_vectors.ids()) | set(h.node_vectors.ids())
        for i in ids:
            np.testing.assert_allclose(g.vector(i), h.vector(i), atol=1e-6)
    finally:
        m2.close()


def no_dangling(g: WorkingGraph) -> None:
    for e in g.all_edges():
        assert e.src in g.nodes and e.dst in g.nodes, e.key


@pytest.fixture
def world(store_url: str) -> Any:
    db = store_url
    m = Memory.open(db, embedder="hash", planner=None)
    ev = [m.add(t, ts=TS + 3600 * i, source="Maya") for i, t in enumerate([
        f"Maya: {SECRET}, went running",          # 0: the one we forget
        "Went running again along the river",    # 1
        "Ran 10k with Sam on Sunday",            # 2
        "Booked a dentist appointment",          # 3
    ])]
    r = m.apply(UpdatePlan(operations=[
        AddNode(ref="shared", kind=NodeKind.CONCEPT, text="Running", grounded_in=ev[:3]),
        AddNode(ref="only", kind=NodeKind.CONCEPT, text="Zanzibar secrets",
                grounded_in=[ev[0]]),
        AddNode(ref="intent", kind=NodeKind.INTENT, text="Change the Zanzibar password",
                grounded_in=[ev[0]]),
        AddNode(ref="fact", kind=NodeKind.FACT, text="Maya runs often",
                grounded_in=[ev[0], ev[1], ev[2]], attrs={"first": TS, "last": TS + 7200,
                                                          "support": 3}),
        AddNode(ref="claim", kind=NodeKind.CLAIM, text="Zanzibar is the best password",
                grounded_in=[ev[0]]),
        AddNode(ref="maya", kind=NodeKind.PERSON, text="Maya"),
        AddNode(ref="zed", kind=NodeKind.PERSON, text="Zed Zanzibar"),
        AddNode(ref="sunday", kind=NodeKind.TIME, text="2023-11-19"),
        AddNode(ref="tuesday", kind=NodeKind.TIME, text="2023-11-21"),
        AddEdge(src="maya", type=EdgeType.PARTICIPATES, dst=ev[0]),
        AddEdge(src="maya", type=EdgeType.PARTICIPATES, dst=ev[1]),
        AddEdge(src="zed", type=EdgeType.PARTICIPATES, dst=ev[0]),
        AddEdge(src=ev[0], type=EdgeType.MENTIONS, dst="tuesday"),
        AddEdge(src=ev[2], type=EdgeType.MENTIONS, dst="sunday"),
        AddEdge(src=ev[0], type=EdgeType.MENTIONS, dst="sunday"),
        AddEdge(src="claim", type=EdgeType.SUPPORTED_BY, dst=ev[0]),
        AddEdge(src="fact", type=EdgeType.SUPPORTED_BY, dst=ev[0]),
        AddEdge(src="fact", type=EdgeType.SUPPORTED_BY, dst=ev[1]),
        AddEdge(src=ev[0], type=EdgeType.CAUSES, dst=ev[3]),
    ]))
    ids = {"ev": ev, **r.created}
    # The same words in namespace B must survive everything done to the default one.
    b = m.add(f"Maya: {SECRET}, went running", ts=TS, source="Maya", namespace="B")
    m.apply(UpdatePlan(operations=[AddNode(ref="c", kind=NodeKind.CONCEPT,
                                           text="Zanzibar secrets", grounded_in=[b])]),
            namespace="B")
    ids["b"] = b
    m.db = db  # type: ignore[attr-defined]
    m.ids = ids  # type: ignore[attr-defined]
    yield m
    m.close()


def test_forget_retracts_an_event_and_what_derives_from_it(world: Memory) -> None:
    m, ids, db = world, world.ids, world.db  # type: ignore[attr-defined]
    ev = ids["ev"]
    g = m.graph()
    b_before = export_text(m, "B")
    vec = {e: g.event_vectors.get(e).copy() for e in ev}
    report = m.forget(ev[0])
    assert report["event"] == ev[0]
    removed = {ids["only"], ids["intent"], ids["claim"], ids["zed"], ids["tuesday"]}
    assert set(report["removed"]) == removed
    assert {ids["shared"], ids["fact"]} <= set(report["updated"])
    # The event is gone, from the graph, the log and the store.
    with pytest.raises(NotFound):
        m.get(ev[0])
    assert ev[0] not in g.nodes and g.event_vectors.get(ev[0]) is None
    assert m.stats()["events"] == 3
    assert ev[0] not in [n.id for n in m.store.events_after("default", 0, 100)]
    # A concept with other grounding stays, loses that grounding, centroid recomputed.
    shared = m.get(ids["shared"])
    assert shared.grounded_in == (ev[1], ev[2])
    assert shared.attrs["event_count"] == 2
    expected = (vec[ev[1]] + vec[ev[2]]) / np.linalg.norm(vec[ev[1]] + vec[ev[2]])
    np.testing.assert_allclose(g.node_vectors.get(ids["shared"]), expected, atol=1e-5)
    # The fact keeps its other evidence; its envelope and support follow.
    fact = m.get(ids["fact"])
    assert fact.grounded_in == (ev[1], ev[2])
    assert fact.attrs["support"] == 2 and fact.attrs["first"] == TS + 3600
    # Derived nodes resting only on the event are gone, with their vectors.
    for nid in (ids["only"], ids["intent"], ids["claim"]):
        with pytest.raises(NotFound):
            m.get(nid)
        assert g.vector(nid) is None
    # People and time anchors only this event tied in are gone; others stay.
    for nid in (ids["zed"], ids["tuesday"]):
        with pytest.raises(NotFound):
            m.get(nid)
    assert m.get(ids["maya"]).text == "Maya"
    assert m.get(ids["sunday"]).text == "2023-11-19"
    assert g.edge(ids["maya"], EdgeType.PARTICIPATES, ev[1]) is not None
    no_dangling(g)
    assert not any(ev[0] in (e.src, e.dst) for e in g.all_edges())
    # Lexical search no longer finds the forgotten words.
    assert m.store.search_text("default", "Zanzibar hunter2", None, 10) == []
    # Namespace B, holding the same words, is untouched.
    assert export_text(m, "B") == b_before
    assert m.store.search_text("B", "hunter2", None, 10)
    assert_reload_equal(m, db)


def test_forget_erases_history_of_removed_nodes(world: Memory) -> None:
    m, ids, db = world, world.ids, world.db  # type: ignore[attr-defined]
    ev = ids["ev"]
    assert m.history(ids["only"]), "the op log had history to erase"
    m.forget(ev[0])
    for nid in (ids["only"], ids["intent"], ids["claim"], ids["zed"], ids["tuesday"]):
        assert m.store.history("default", nid) == []
        with pytest.raises(NotFound):
            m.history(nid)
    forget_records = [r for r in m.store.history("default", ev[0])]
    assert [r.op for r in forget_records] == ["FORGET"]
    assert forget_records[0].after is not None
    assert set(forget_records[0].after["removed"]) >= {ids["only"], ids["claim"]}
    # Nothing of the forgotten words survives in the audit trail.
    log = oplog_text(db, "default")
    for word in ("hunter2", "Zanzibar"):
        assert word not in log
    # A survivor's history is kept, and records the retraction.
    hist = m.history(ids["shared"])
    assert hist[0].op == "ADD_NODE"
    assert hist[-1].op == "UPDATE_NODE" and hist[-1].plan_id == "forget"


def test_an_edge_is_one_record_in_the_history_of_both_its_ends(world: Memory) -> None:
    """An edge operation is logged once, under its source with the other end as its peer;
    both ends' history shows it, and forgetting either end erases it."""
    m, ids = world, world.ids  # type: ignore[attr-defined]
    ev, maya = ids["ev"], ids["maya"]
    adds = [r for r in m.store.oplog("default") if r.op == "ADD_EDGE"]  # type: ignore[attr-defined]
    assert len(adds) == len(list(m.graph().all_edges()))  # one record per edge
    record = next(r for r in adds if (r.target, r.peer) == (maya, ev[1]))
    assert record.after == {"src": maya, "type": "PARTICIPATES", "dst": ev[1],
                            "weight": pytest.approx(m.graph().edge(
                                maya, EdgeType.PARTICIPATES, ev[1]).weight)}
    for end in (maya, ev[1]):
        assert [r.seq for r in m.history(end) if r.op == "ADD_EDGE" and r.peer in (maya, ev[1])
                and r.target in (maya, ev[1])] == [record.seq]
    m.forget(ev[0])
    left = [(r.target, r.peer) for r in m.history(maya) if r.op == "ADD_EDGE"]
    assert (maya, ev[1]) in left and (maya, ev[0]) not in left
    assert not any(ev[0] in (r.target, r.peer) for r in m.store.oplog("default")  # type: ignore[attr-defined]
                   if r.op != "FORGET")


def test_forget_removes_the_embedding_cache_entry(world: Memory) -> None:
    m, ids, db = world, world.ids, world.db  # type: ignore[attr-defined]
    ev = ids["ev"]
    text = f"Maya: {SECRET}, went running"
    h = text_hash(m.embedder.name, text)  # type: ignore[union-attr]
    assert h in cache_hashes(db, "default")
    others = cache_hashes(db, "default") - {h}
    m.forget(ev[0])
    assert cache_hashes(db, "default") == others
    assert h in cache_hashes(db, "B"), "B's cache belongs to B"


def test_forget_then_readd_makes_a_new_event(world: Memory) -> None:
    m, ids = world, world.ids  # type: ignore[attr-defined]
    ev = ids["ev"]
    m.forget(ev[3])
    again = m.add("Booked a dentist appointment", ts=TS + 3 * 3600, source="Maya")
    assert again != ev[3]
    assert m.get(again).text == "Booked a dentist appointment"
    assert m.stats()["events"] == 4 and m.stats()["pending"] == 0


def test_forgetting_an_event_not_yet_folded_removes_it_from_the_log(world: Memory) -> None:
    """The working graph holds only folded events: forgetting one still pending must still
    take it out of the event log, or adding the same words again would return the id of an
    event that no longer exists, and the fold cursor would never reach the log's end."""
    m = world
    text = "Renewed the parking permit at the town hall"
    pending = m.add(text, ts=TS + 90 * 3600, source="Maya", fold=False)
    m.forget(pending)
    again = m.add(text, ts=TS + 90 * 3600, source="Maya")
    assert again != pending
    assert m.get(again).text == text
    assert m.stats()["pending"] == 0
    assert m.store.get_cursor("default") == m.store.last_seq("default")


# A genuine store error half-way through the commit: a trigger refusing the FORGET op.
FAIL_FORGET = {
    False: [("CREATE TRIGGER no_forget BEFORE INSERT ON oplog WHEN NEW.op = 'FORGET' "
             "BEGIN SELECT RAISE(ABORT, 'injected'); END")],
    True: [("CREATE FUNCTION no_forget() RETURNS trigger LANGUAGE plpgsql AS 'BEGIN "
            "IF NEW.op = ''FORGET'' THEN RAISE EXCEPTION ''injected''; END IF; "
            "RETURN NEW; END'"),
           ("CREATE TRIGGER no_forget BEFORE INSERT ON oplog FOR EACH ROW "
            "EXECUTE FUNCTION no_forget()")],
}


def _sql(m: Memory, statements: list[str]) -> None:
    """Run raw SQL on the memory's own store connection (SQLite) or pool (PostgreSQL)."""
    store: Any = m.store
    for sql in statements:
        if hasattr(store, "_db"):
            store._db.execute(sql)
        else:
            with store._tx() as conn:
                conn.execute(sql)


def test_forget_is_atomic_when_the_store_fails(world: Memory) -> None:
    m, ids = world, world.ids  # type: ignore[attr-defined]
    before = export_text(m, "default")
    g = m.graph()
    nodes_before = dict(g.nodes)
    _sql(m, FAIL_FORGET[m.store.url.startswith("postgresql://")])
    with pytest.raises(Exception, match="injected"):
        m.forget(ids["ev"][0])
    _sql(m, ["DROP TRIGGER no_forget" + (" ON oplog" if m.store.url.startswith("postgres")
                                         else "")])
    assert dict(g.nodes) == nodes_before
    assert export_text(m, "default") == before
    assert m.get(ids["ev"][0]).text.endswith("went running")


def test_wipe_takes_one_namespace_and_nothing_else(world: Memory) -> None:
    m, db = world, world.db  # type: ignore[attr-defined]
    m.add("something in C", ts=TS, namespace="C")
    b_before, c_before = export_text(m, "B"), export_text(m, "C")
    m.wipe()
    s = m.stats()
    assert s["events"] == 0 and s["nodes"] == {} and s["edges"] == {}
    assert m.store.get_cursor("default") == 0
    assert "default" not in m.namespaces()
    assert set(m.namespaces()) == {"B", "C"}
    for table in ("nodes", "events", "edges", "vectors", "aliases", "oplog", "cursors",
                  "meta", "embed_cache"):
        assert raw_rows(db, table, "default") == [], f"{table} still holds rows of the wiped " \
            "namespace"
    if not db.startswith("postgresql://"):  # SQLite keeps its search index in a table apart
        with sqlite3.connect(db) as raw:
            assert raw.execute("SELECT COUNT(*) FROM node_text WHERE namespace = 'default'"
                               ).fetchone()[0] == 0
    assert export_text(m, "B") == b_before and export_text(m, "C") == c_before
    assert m.graph().nodes == {}
    # The namespace is usable again, from scratch.
    eid = m.add("a new beginning", ts=TS)
    assert m.get(eid).attrs["seq"] == 1
    assert_reload_equal(m, db)


def test_wipe_of_another_namespace_by_name(world: Memory) -> None:
    m = world
    default_before = export_text(m, "default")
    m.wipe("B")
    assert m.stats("B")["events"] == 0
    assert export_text(m, "default") == default_before


def test_forget_removes_people_and_times_left_edgeless_by_retraction(tmp_path: Path) -> None:
    m = Memory.open(tmp_path / "f.db", embedder="hash", planner=None)
    try:
        e = m.add("Maya said John thinks the bridge is unsafe; inspect it by 2024-01-05",
                  ts=TS, source="Maya")
        keep = m.add("unrelated", ts=TS + 1)
        r = m.apply(UpdatePlan(operations=[
            AddNode(ref="john", kind=NodeKind.PERSON, text="John Doe"),
            AddNode(ref="cl", kind=NodeKind.CLAIM, text="the bridge is unsafe",
                    grounded_in=[e]),
            AddEdge(src="john", type=EdgeType.HOLDS, dst="cl"),
            AddEdge(src="cl", type=EdgeType.SUPPORTED_BY, dst=e),
            AddNode(ref="due", kind=NodeKind.TIME, text="2024-01-05"),
            AddNode(ref="in", kind=NodeKind.INTENT, text="Inspect the bridge", grounded_in=[e]),
            AddEdge(src="due", type=EdgeType.DEADLINE_FOR, dst="in")]))
        m.forget(e)
        g = m.graph()
        left = {n.text for n in g.nodes.values() if n.id != keep}
        assert left == set(), f"left behind: {left}"
        assert r.created["john"] not in g.nodes
    finally:
        m.close()


def test_forget_without_embedder_still_purges_the_cache(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    with Memory.open(db, embedder="hash", planner=None) as m:
        e = m.add("my secret diary entry", ts=TS)
        m.add("another entry", ts=TS + 1)
        h = text_hash(m.embedder.name, "my secret diary entry")  # type: ignore[union-attr]
    assert h in cache_hashes(db, "default")
    with Memory.open(db, embedder=None, planner=None) as m:  # what `enfold forget` does
        m.forget(e)
    assert h not in cache_hashes(db, "default")


def test_forget_erases_history_of_nodes_merged_into_removed_ones(tmp_path: Path) -> None:
    db = tmp_path / "f.db"
    # Near-duplicate conversion off, so that two concepts of one event can exist and merge.
    m = Memory.open(db, embedder="hash", planner=None,
                    settings=Settings().with_(merge_threshold=1.01))
    try:
        e = m.add("Zanzibar-7 vault combination is 1234", ts=TS)
        r = m.apply(UpdatePlan(operations=[
            AddNode(ref="a", kind=NodeKind.CONCEPT, text="Vault codes", grounded_in=[e]),
            AddNode(ref="b", kind=NodeKind.CONCEPT, text="Zanzibar combination",
                    grounded_in=[e], attrs={"summary": "the 1234 combination"}),
            AddEdge(src="b", type=EdgeType.RELATED_TO, dst="a")]))
        m.apply(UpdatePlan(operations=[MergeNodes(keep=r.created["a"], absorb=r.created["b"])]))
        m.forget(e)
        assert "Zanzibar" not in oplog_text(db, "default")
        assert raw_rows(db, "aliases", "default") == []
    finally:
        m.close()


def test_history_of_a_merged_node_lists_an_edge_between_the_two_once(store_url: str) -> None:
    """An edge between two nodes is one record under one end with the other as its peer;
    after a merge, the history of the absorbed id (both ends' records) shows it once."""
    m = Memory.open(store_url, embedder="hash", planner=None)
    try:
        e1 = m.add("soil testing for the garden", ts=TS)
        e2 = m.add("bike commute to work", ts=TS + 100)
        a = m.apply(UpdatePlan(operations=[
            AddNode(ref="a", kind=NodeKind.CONCEPT, text="soil testing", grounded_in=[e1]),
            AddEdge(src=e1, dst="a", type=EdgeType.GROUNDS)])).created["a"]
        b = m.apply(UpdatePlan(operations=[
            AddNode(ref="b", kind=NodeKind.CONCEPT, text="bike commute", grounded_in=[e2]),
            AddEdge(src=e2, dst="b", type=EdgeType.GROUNDS)])).created["b"]
        m.apply(UpdatePlan(operations=[AddEdge(src=a, dst=b, type=EdgeType.RELATED_TO)]))
        m.apply(UpdatePlan(operations=[MergeNodes(keep=a, absorb=b)]))
        seqs = [r.seq for r in m.history(b)]
        assert seqs == sorted(set(seqs))
        assert sum(1 for r in m.history(b) if r.op == "ADD_EDGE"
                   and {r.target, r.peer} == {a, b}) == 1
    finally:
        m.close()


def test_forget_rebuilds_what_only_the_event_worded(world: Memory) -> None:
    """A survivor whose text came from the forgotten event is rebuilt from its remaining
    evidence (or goes, when that cannot rebuild it); one whose text its other events still
    say keeps it, and its history is left alone."""
    m, ids, db = world, world.ids, world.db  # type: ignore[attr-defined]
    ev = ids["ev"]
    router = m.add("I need to change the router password before the weekend", ts=TS + 9000,
                   source="Maya")
    r = m.apply(UpdatePlan(operations=[
        AddNode(ref="club", kind=NodeKind.CONCEPT, text="Zanzibar running club",
                grounded_in=[ev[0], ev[2]], attrs={"summary": f"Maya: {SECRET}, went running",
                                           "keywords": ["Zanzibar", "running club"]}),
        AddNode(ref="todo", kind=NodeKind.INTENT, text="change the Zanzibar password",
                grounded_in=[ev[0], router],
                attrs={"category": "follow_up", "status": "pending", "source": "obligation",
                       "history": [{"status": "pending", "at": TS, "by": "rule",
                                    "reason": "Zanzibar-7 stated", "event": ev[0]}]}),
        AddNode(ref="stated", kind=NodeKind.INTENT, text="stop telling hunter2 to people",
                grounded_in=[ev[0], ev[3]],
                attrs={"category": "follow_up", "status": "pending", "source": "obligation"}),
        AddEdge(src=ev[0], type=EdgeType.TRIGGERS, dst="todo"),
        AddEdge(src=router, type=EdgeType.TRIGGERS, dst="todo"),
        AddEdge(src=ev[0], type=EdgeType.TRIGGERS, dst="stated"),
        AddEdge(src=ev[3], type=EdgeType.TRIGGERS, dst="stated")]))
    club, todo, stated = r.created["club"], r.created["todo"], r.created["stated"]
    report = m.forget(ev[0])
    # The concept: label, keywords and summary from the event left.
    node = m.get(club)
    assert "zanzibar" not in node.text.lower() and node.text != "Zanzibar running club"
    assert not any("zanzibar" in k.lower() for k in node.attrs["keywords"])
    assert node.attrs["summary"] == m.get(ev[2]).text
    # The intent: the goal stated by the remaining event, and that event's clause; its
    # history keeps the entry, without the words.
    intent = m.get(todo)
    assert intent.text == "Change the router password before the weekend"
    assert intent.attrs["clause"] == "I need to change the router password before the weekend"
    assert intent.attrs["status"] == "pending" and intent.attrs["category"] == "follow_up"
    assert intent.attrs["history"][0]["reason"] == "[forgotten]"
    # The intent no remaining event states goes.
    with pytest.raises(NotFound):
        m.get(stated)
    assert {club, todo} <= set(report["rebuilt"]) and stated in report["removed"]
    # "Running" is what its other events say: kept as it is, history untouched.
    assert m.get(ids["shared"]).text == "Running" and ids["shared"] not in report["rebuilt"]
    assert m.history(ids["shared"])[0].after["text"] == "Running"  # type: ignore[index]
    # The concept's history keeps its records, with the words redacted.
    added: Any = m.history(club)[0]
    assert added.op == "ADD_NODE" and added.after["text"] == "[forgotten]"
    assert added.after["attrs"]["summary"] == "[forgotten]"
    log = oplog_text(db, "default")
    for word in ("hunter2", "Zanzibar"):
        assert word not in log
    assert_reload_equal(m, db)


def test_forget_rewords_a_claim_from_its_remaining_utterance(tmp_path: Path) -> None:
    """A claim restated by another utterance takes that utterance's wording; a person
    named only by the forgotten event, but tied in elsewhere, keeps the rest of the name."""
    m = Memory.open(tmp_path / "c.db", embedder="hash", planner=None)
    try:
        e1 = m.add("I think the Zanzibar bridge is unsafe", ts=TS, source="Maya")
        e2 = m.add("I think the bridge is unsafe, again", ts=TS + 60, source="Maya")
        r = m.apply(UpdatePlan(operations=[
            AddNode(ref="cl", kind=NodeKind.CLAIM, text="the Zanzibar bridge is unsafe",
                    grounded_in=[e1, e2],
                    attrs={"holder": "Maya", "predicate": "think", "stance": "negative",
                           "target": "the bridge", "target_key": "bridge"}),
            AddNode(ref="sam", kind=NodeKind.PERSON, text="Sam Zanzibar"),
            AddEdge(src="cl", type=EdgeType.SUPPORTED_BY, dst=e1),
            AddEdge(src="cl", type=EdgeType.SUPPORTED_BY, dst=e2),
            AddEdge(src="sam", type=EdgeType.PARTICIPATES, dst=e1),
            AddEdge(src="sam", type=EdgeType.PARTICIPATES, dst=e2)]))
        m.forget(e1)
        claim = m.get(r.created["cl"])
        assert claim.text == "the bridge is unsafe, again" and claim.grounded_in == (e2,)
        assert m.get(r.created["sam"]).text == "Sam"
        assert "zanzibar" not in oplog_text(tmp_path / "c.db", "default").lower()
    finally:
        m.close()
