"""forget() and wipe() leave none of the forgotten words behind (SPEC §9, issue 25).

A realistic stream — background chatter from the perf bench's generator and a topic whose
first events name a distinctive marker word — is folded by the local planner with the hash
embedder and consolidated, so that the marker ends up in a concept's label and summary, an
intent's label, a fact's statement, a claim, the op log and the search index. After the
events that hold it are forgotten, the survivors are rebuilt from their remaining evidence
and the marker is nowhere: not in nodes, op log, search index, recall, export — and, on
SQLite, not in the bytes of the database file, its write-ahead log or its shared memory.
"""

from __future__ import annotations

import io
import json
import random
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from enfold.bench.perf import synthetic_events
from enfold.intents import STATUSES
from enfold.memory import Memory
from enfold.model import NodeKind
from enfold.settings import Settings
from enfold.store import open_store
from enfold.store.base import TABLES

MARKER = "Quillfeather"
# What the file may hold of it: the word, or its Porter stem in the FTS5 index.
STEM = b"quillfeath"
T0 = datetime(2024, 1, 8, 9, tzinfo=UTC)
TOPIC = [
    "I need to renew the Quillfeather climbing membership before Friday.",
    "The Quillfeather climbing membership card expired, renew the climbing membership.",
    ("Quillfeather climbing membership renewal form is confusing, Maya thinks the "
     "Quillfeather climbing gym is overpriced."),
    "Climbing membership renewal at the gym took ages again.",
    "I need to renew the climbing membership before Friday.",
    "Climbing membership renewal paid, the climbing gym membership card works.",
    "Climbing gym membership renewal reminder came by email.",
    "Went to the climbing gym with the new membership card.",
]


def ingest(m: Memory, ns: str = "default", *, topic: bool = True) -> list[str]:
    """Background events and (with ``topic``) the topic, interleaved by time; then a full
    consolidation pass. Returns the ids of the topic's events that name the marker."""
    items: list[tuple[datetime, Any]] = [
        (datetime.fromisoformat(e["ts"]), e) for e in synthetic_events(160, seed=3)]
    if topic:
        items += [(T0 + timedelta(hours=5 * i), text) for i, text in enumerate(TOPIC)]
    marked = []
    for ts, item in sorted(items, key=lambda x: x[0]):
        if isinstance(item, str):
            eid = m.add(item, ts=ts.isoformat(), source="Maya", namespace=ns)
            if MARKER in item:
                marked.append(eid)
        else:
            m.add_many([item], namespace=ns)
    m.consolidate(ns)
    return marked


def has_marker(value: Any) -> bool:
    return MARKER.lower() in json.dumps(value, ensure_ascii=False).lower()


def export_text(m: Memory, ns: str = "default") -> str:
    buf = io.StringIO()
    m.export(buf, namespace=ns)
    return buf.getvalue()


def rows_with_marker(url: str, ns: str) -> dict[str, int]:
    """Per table, the stored rows of the namespace that hold the marker (fresh connection)."""
    store: Any = open_store(url)
    try:
        return {t: n for t in TABLES if t != "api_keys"
                and (n := sum(has_marker([str(c) for c in r])
                              for r in store.dump_rows(t, ns)))}
    finally:
        store.close()


def file_hits(db: Path) -> dict[str, int]:
    """Occurrences of the marker (any case, or its stem) in the raw bytes of the database
    file, its write-ahead log and its shared-memory file."""
    out = {}
    for suffix in ("", "-wal", "-shm"):
        f = Path(f"{db}{suffix}")
        if f.exists():
            out[suffix or "db"] = f.read_bytes().lower().count(STEM)
    return out


def where(m: Memory, ns: str = "default") -> dict[str, set[str]]:
    """Derived nodes whose text (``<kind>.text``) or an attribute (``<kind>.<key>``) holds
    the marker, by place."""
    out: dict[str, set[str]] = {}
    for n in m.graph(ns).nodes.values():
        if n.kind is NodeKind.EVENT:
            continue
        if MARKER.lower() in n.text.lower():
            out.setdefault(f"{n.kind.value}.text", set()).add(n.id)
        for key, value in n.attrs.items():
            if has_marker(value):
                out.setdefault(f"{n.kind.value}.{key}", set()).add(n.id)
    return out


def graph_state(m: Memory, ns: str) -> dict[str, Any]:
    g = m.graph(ns)
    return {"nodes": {i: {**n.to_dict(), "namespace": None} for i, n in g.nodes.items()},
            "edges": {e.key: {**e.to_dict(), "namespace": None} for e in g.all_edges()},
            "aliases": dict(g.aliases), "vectors": sorted([*g.event_vectors.ids(),
                                                            *g.node_vectors.ids()])}


def test_forget_leaves_none_of_its_words_behind(store_url: str, tmp_path: Path) -> None:
    sqlite = not store_url.startswith("postgresql://")
    # The marker is a name (the gym's): a name never leads a concept label (nor a fact's
    # theme, which is that label), so it reaches the concept through its keywords, which keep the words of the events the concept was
    # formed from as long as it is not renamed.
    m = Memory.open(store_url, embedder="hash", planner="local",
                    settings=Settings(relabel_growth=100.0))
    try:
        marked = ingest(m)
        assert len(marked) == 3
        # The marker went everywhere the issue found it: so the checks below prove something.
        before = where(m)
        for place in ("concept.summary", "concept.keywords", "intent.text",
                      "claim.text"):  # a fact's theme is the concept's label
            assert before.get(place), f"the stream did not put the marker in {place}"
        # A fact's statement is a template over its support: it copies no event's words.
        assert "fact.text" not in before
        survivors = {i for p in ("concept.keywords", "intent.text") for i in before[p]}
        ops_before = {r.seq: r for r in m.store.oplog("default")}  # type: ignore[attr-defined]
        assert sum(has_marker(r.to_dict()) for r in ops_before.values()) >= 4
        assert m.store.search_text("default", MARKER, None, 10)
        assert MARKER in export_text(m)
        assert rows_with_marker(store_url, "default").keys() >= {"nodes", "oplog"}
        if sqlite:
            assert sum(file_hits(Path(store_url)).values()) > 0

        reports = [m.forget(e) for e in marked]
        # SQLite erases the deleted content from its files; PostgreSQL cannot promise that
        # (docs/forgetting.md): its rows are checked below, not its files.
        assert [r["erased"] for r in reports] == [sqlite] * 3

        # Survivors were rebuilt from what is left, not removed: they still stand.
        g = m.graph()
        assert survivors <= set(g.nodes), "a survivor was removed instead of rebuilt"
        rebuilt = {i for r in reports for i in r["rebuilt"]}
        assert survivors <= rebuilt
        assert where(m) == {}
        for nid in survivors:
            node = g.nodes[nid]
            assert node.text.strip() and node.grounded_in
        concept = g.nodes[next(iter(before["concept.keywords"]))]
        assert "climbing" in concept.text.lower() and concept.attrs["summary"] in [
            g.nodes[e].text for e in concept.grounded_in]
        assert all(g.nodes[i].attrs.get("status") in STATUSES for i in g.of_kind(NodeKind.INTENT))
        # The op log keeps no copy, and only the history of what was touched changed.
        ops_after = {r.seq: r for r in m.store.oplog("default")}  # type: ignore[attr-defined]
        assert not any(has_marker(r.to_dict()) for r in ops_after.values())
        touched = {i for r in reports for i in (r["event"], *r["removed"], *r["updated"])}
        for seq, old in ops_before.items():
            if seq in ops_after and ops_after[seq] != old:
                assert {old.target, old.peer} & touched, f"op {seq} of an untouched node changed"
        assert m.store.search_text("default", MARKER, None, 10) == []
        if sqlite:  # while the memory is open: the log was emptied by the forget itself
            assert file_hits(Path(store_url)) == {k: 0 for k in file_hits(Path(store_url))}
        pack = m.recall(f"{MARKER} climbing membership")
        assert MARKER.lower() not in pack.render(4000).lower()
        assert not any(MARKER.lower() in i.text.lower()
                       for i in (*pack.evidence, *pack.concepts, *pack.facts, *pack.intents))
        exported = export_text(m)
        assert MARKER.lower() not in exported.lower()
        assert rows_with_marker(store_url, "default") == {}
        # The export of what is left round-trips: its import is the same graph, with the
        # same op log (renumbered: import appends it, forget left gaps in its numbers).
        copy = Memory.open(tmp_path / "copy.db", embedder="hash", planner=None)
        try:
            copy.import_(exported.splitlines())
            assert graph_state(copy, "default") == graph_state(m, "default")
            again = [json.loads(line) for line in export_text(copy).splitlines()]
            first = [json.loads(line) for line in exported.splitlines()]
            assert [{**r, "seq": 0} for r in again] == [{**r, "seq": 0} for r in first]
        finally:
            copy.close()
    finally:
        m.close()
    if sqlite:  # after close: what is on disk
        assert file_hits(Path(store_url)) == {k: 0 for k in file_hits(Path(store_url))}


def test_wipe_leaves_none_of_the_namespace_in_the_file(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    m = Memory.open(db, embedder="hash", planner="local")
    try:
        ingest(m)
        ingest(m, "other", topic=False)  # the same chatter, no marker: it stays
        other = export_text(m, "other")
        assert sum(file_hits(db).values()) > 0
        assert m.wipe() is True
        assert file_hits(db) == {k: 0 for k in file_hits(db)}  # still open: no copy in the log
        assert m.stats()["events"] == 0
        assert export_text(m, "other") == other
        assert m.recall(f"{MARKER} membership").render(2000).lower().count(
            MARKER.lower()) == 0
    finally:
        m.close()
    assert file_hits(db) == {k: 0 for k in file_hits(db)}


@pytest.mark.parametrize("embedder", ["hash", None])
def test_forget_of_a_pending_event_erases_it_from_the_file(tmp_path: Path,
                                                           embedder: str | None) -> None:
    db = tmp_path / "p.db"
    with Memory.open(db, embedder="hash", planner="local") as m:
        ingest(m, topic=False)
        pending = m.add(f"The {MARKER} vault code is 4417", ts=T0.isoformat(), fold=False)
    with Memory.open(db, embedder=embedder, planner=None) as m:  # as `enfold forget` does
        m.forget(pending)
        assert m.stats()["pending"] == 0
    assert file_hits(db) == {k: 0 for k in file_hits(db)}


# seed 6: a person named from a forgotten word ("Ref xq0000") is renamed, and a fact of
# theirs rebuilt after it made the person look again: the words the first look found must
# still leave the person's op log (they stayed before session 11)
@pytest.mark.parametrize("seed", [0, 1, 6])
def test_a_word_only_one_event_said_leaves_with_it(tmp_path: Path, seed: int) -> None:
    """Each background event carries a nonce word of its own; forgetting events at random
    takes their nonces out of the graph, the op log and the file, leaves every other
    event's, and keeps the working graph equal to what the store reloads."""
    from test_forget import assert_reload_equal, no_dangling

    db = tmp_path / "n.db"
    m = Memory.open(db, embedder="hash", planner="local")
    try:
        for i, e in enumerate(synthetic_events(160, seed=seed)):
            m.add_many([{**e, "text": f"{e['text']} Ref xq{i:04d}."}])
        m.consolidate()
        g = m.graph()
        nonce = {eid: re.search(r"xq\d{4}", g.nodes[eid].text).group()  # type: ignore[union-attr]
                 for eid in g.of_kind(NodeKind.EVENT)}
        copied = {w for n in g.nodes.values() if n.kind is not NodeKind.EVENT
                  for w in re.findall(r"xq\d{4}", json.dumps(n.to_dict()))}
        gone = random.Random(seed).sample(sorted(nonce), 12)
        assert copied & {nonce[e] for e in gone}, "no forgotten nonce was in a derived node"
        for eid in gone:
            m.forget(eid)
            no_dangling(g)
        # no survivor, people and time anchors included, still cites a forgotten event
        assert not {e for n in g.nodes.values() for e in n.grounded_in} & set(gone)
        left = json.dumps([n.to_dict() for n in g.nodes.values()]) + json.dumps(
            [r.to_dict() for r in m.store.oplog("default")])  # type: ignore[attr-defined]
        for eid in gone:
            assert nonce[eid] not in left
        assert_reload_equal(m, db)
    finally:
        m.close()
    raw = db.read_bytes() + b"".join(Path(f"{db}{s}").read_bytes() for s in ("-wal", "-shm")
                                     if Path(f"{db}{s}").exists())
    for eid, word in nonce.items():
        assert (word.encode() in raw) == (eid not in gone), word


def test_the_quote_lengths_are_settings() -> None:
    from enfold.write.traces import Trace

    forgotten = "the quick brown fox jumps over the lazy dog near the river bank today"
    evidence = [" ".join(reversed(forgotten.split()))]  # every word, no stretch of the text
    fragment = "brown fox jumps over"  # 20 characters of it
    assert Trace(forgotten, evidence).taints(fragment)  # a quote: 16 characters are enough
    assert not Trace(forgotten, evidence, min_quote=30).taints(fragment)
    head = f"as they said: {forgotten[:44]} and so on"
    assert Trace(forgotten, evidence, min_quote=41).taints(head)  # the first 40 are quoted
    assert not Trace(forgotten, evidence, quote=60, min_quote=41).taints(head)
    s = Settings().with_(forget_quote_chars=60, forget_min_quote_chars=30)
    assert (s.forget_quote_chars, s.forget_min_quote_chars) == (60, 30)
