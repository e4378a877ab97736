"""Namespace sessions: a memory keeps its working graphs within a budget, evicting the least
recently used ones, and an evicted namespace reopens answering as it did."""

from __future__ import annotations

import threading
from pathlib import Path

from enfold import Memory
from enfold.bench.perf import synthetic_events, synthetic_stream
from enfold.bench.scale import other_events
from enfold.embed import HashingEmbedder
from enfold.session import estimate_bytes
from enfold.settings import Settings

QUERIES = synthetic_stream(0).queries(4)


def _open(path: Path, **settings: object) -> Memory:
    return Memory.open(path, embedder=HashingEmbedder(), settings=Settings().with_(**settings))


def _resident(m: Memory) -> list[str]:
    return [s.namespace for s in m.sessions.resident()]


def _top(m: Memory, ns: str) -> list[list[str]]:
    return [[i.id for i in m.recall(q, k=10, namespace=ns, touch=False).evidence]
            for q in QUERIES]


def test_a_tiny_budget_evicts_and_a_reopened_namespace_recalls_the_same(tmp_path: Path) -> None:
    m = _open(tmp_path / "m.db", session_budget_mb=0.01)
    m.add_many(list(synthetic_events(80, seed=1)), namespace="a")
    m.add_many(list(other_events(60, seed=2)), namespace="b")
    assert _resident(m) == ["b"]  # the most recent one stays, however large
    m.add_many(list(synthetic_events(60, seed=3)), namespace="c")
    before = _top(m, "a")
    first = m.graph("a")
    assert _resident(m) == ["a"]
    _top(m, "b")
    assert _resident(m) == ["b"]
    evictions = m.sessions.stats.evictions
    assert evictions >= 3
    assert _top(m, "a") == before  # rebuilt from the store: the same top-k
    assert m.graph("a") is not first
    assert m.stats("a")["events"] == 80
    m.close()


def test_the_count_limit_and_lru_order(tmp_path: Path) -> None:
    m = _open(tmp_path / "m.db", session_max=2)
    for ns in ("a", "b", "c"):
        m.add(f"{ns} went to the market", namespace=ns)
    assert _resident(m) == ["b", "c"]
    m.graph("b")
    m.add("d went too", namespace="d")
    assert _resident(m) == ["b", "d"]
    m.close()


def test_a_session_in_use_is_never_evicted(tmp_path: Path) -> None:
    m = _open(tmp_path / "m.db", session_max=1)
    m.add("Maya ran 10k", namespace="a")
    entered, done = threading.Event(), threading.Event()

    def hold() -> None:
        with m.reading("a") as g:
            entered.set()
            done.wait(10)
            assert m.graph("a") is g

    t = threading.Thread(target=hold)
    t.start()
    entered.wait(10)
    try:
        for ns in ("b", "c"):  # each would evict "a" were it not in use
            m.add(f"{ns} went swimming", namespace=ns)
            assert "a" in _resident(m)
    finally:
        done.set()
        t.join()
    m.add("d went climbing", namespace="d")  # now "a" goes
    assert _resident(m) == ["d"]
    m.close()


def test_eviction_saves_the_hnsw_files_and_reopening_restores_them(tmp_path: Path) -> None:
    m = _open(tmp_path / "m.db", session_max=1, ann_threshold=16)
    # "b" is written first: BM25's statistics span the whole text index, so an event added
    # to another namespace between the two recalls would move a's lexical scores (a near
    # tie can swap) and the comparison would no longer be of the restore alone
    m.add("b ran", namespace="b")
    m.add_many(list(synthetic_events(40, seed=4)), namespace="a")
    before = _top(m, "a")
    events_file = m.store.sidecar("a", "events.usearch")
    assert events_file is not None and not events_file.exists()
    m.graph("b")  # evicts "a": its HNSW graph is written
    assert _resident(m) == ["b"] and events_file.exists()
    assert _top(m, "a") == before
    assert m.graph("a").vector_load["events"] == "restored"
    m.wipe("b")
    m.graph("b")
    m.add("c ran", namespace="c")  # evicts "a" again
    m.wipe("a")  # evicted, yet its files go with it
    assert not events_file.exists()
    m.close()


def test_the_estimate_grows_with_the_graph(tmp_path: Path) -> None:
    m = _open(tmp_path / "m.db")
    m.add_many(list(synthetic_events(20)), namespace="a")
    small = estimate_bytes(m.graph("a"))
    m.add_many(list(synthetic_events(120))[20:], namespace="a")
    g = m.graph("a")
    assert estimate_bytes(g) > 3 * small > 0
    assert g.edge_total == g.edge_count()
    stats = m.sessions.stats
    assert stats.estimated_bytes == estimate_bytes(g) and stats.evictions == 0
    m.close()
