"""Recall's work is bounded by what it touches, not by the size of the memory (issue 23):
lexical search, grounding, hub traversal, the sequence index, and embedding threads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from enfold import Memory
from enfold.embed import HashingEmbedder, MiniLMEmbedder, available_cores, make_embedder
from enfold.graph import WorkingGraph
from enfold.model import Edge, EdgeType, Node, NodeKind
from enfold.recall.operators import (
    GROUND_SCAN,
    ground,
    personalized_pagerank,
    recent_neighbors,
    traverse,
)
from enfold.settings import Settings
from enfold.store.sqlite import SQLiteStore


def _event(i: int, ns: str = "A") -> Node:
    return Node(id=f"ev_{i:05d}", namespace=ns, kind=NodeKind.EVENT, text=f"event {i}",
                attrs={"ts": 1_700_000_000.0 + i, "seq": i + 1})


# ------------------------------------------------------------------------ lexical
@pytest.fixture
def texts_store(tmp_path: Path) -> SQLiteStore:
    """200 notes with "the" in every one, "garden" in 40, "kiln" in 3."""
    store = SQLiteStore(str(tmp_path / "s.db"))
    mem = Memory(store)
    for i in range(200):
        extra = " kiln" if i % 70 == 0 else ""
        topic = "garden" if i % 5 == 0 else f"topic{i}"
        mem.add(f"the note {i} about the {topic}{extra}")
    return store


def test_an_unbounded_budget_changes_nothing(texts_store: SQLiteStore) -> None:
    for q in ("the garden kiln", "garden", "the"):
        assert texts_store.search_text("default", q, [NodeKind.EVENT], 20, max_rows=10_000) \
            == texts_store.search_text("default", q, [NodeKind.EVENT], 20)


@pytest.mark.parametrize("first", [1_024, 1])
def test_search_text_equals_its_one_statement_reference(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, first: int) -> None:
    """The scored rows and the columns read are kept between calls: the results stay the
    reference's across kinds, limits, namespaces, and writes by this connection (a row of
    the index deleted and its rowid given to a new one) and by another; and when the best
    rows taken first (``first``: few) hold too few of the kinds asked for."""
    import enfold.store.sqlite

    monkeypatch.setattr(enfold.store.sqlite, "_SCORED_FIRST", first)
    store = SQLiteStore(str(tmp_path / "s.db"))
    mem = Memory(store, embedder=HashingEmbedder(), namespace="A")
    other = Memory(store, embedder=HashingEmbedder(), namespace="B")
    for i in range(120):
        mem.add(f"the garden note {i} about {'kiln' if i % 7 == 0 else 'roses'} and Sam")
        if i % 3 == 0:
            other.add(f"the garden in namespace B, note {i}")
    asks = [("A", [NodeKind.EVENT], 10), ("A", [NodeKind.EVENT], 100),
            ("A", [NodeKind.CONCEPT, NodeKind.FACT, NodeKind.CLAIM, NodeKind.INTENT], 50),
            ("A", None, 7), ("B", [NodeKind.EVENT], 20), ("A", [NodeKind.EVENT], 0),
            ("A", [NodeKind.PERSON], 1), ("B", [NodeKind.EVENT], 1)]

    def check() -> None:
        for q in ("the garden kiln", "roses", "garden note Sam", "zebra"):
            for max_rows in (None, 30):
                for ns, kinds, limit in asks:
                    assert store.search_text(ns, q, kinds, limit, max_rows=max_rows) == \
                        store._search_text_reference(ns, q, kinds, limit, max_rows=max_rows)

    check()
    newest = max(store.search_text("A", "garden", [NodeKind.EVENT], 500), key=lambda h: h[0])
    mem.forget(newest[0])
    mem.add("the garden kiln, said anew")  # may take the forgotten row's rowid
    check()
    second = SQLiteStore(str(tmp_path / "s.db"))  # another connection writes
    Memory(second, embedder=HashingEmbedder(), namespace="A").add("garden kiln roses, again")
    second.close()
    check()
    assert any("again" in (store.get_node("A", i).text or "")  # type: ignore[union-attr]
               for i, _ in store.search_text("A", "again", [NodeKind.EVENT], 5))


def test_the_commonest_words_are_left_out_to_stay_within_the_budget(
        texts_store: SQLiteStore) -> None:
    # "the" matches all 200 rows, "garden" 40, "kiln" 3: with 50 rows, "the" is left out
    bounded = texts_store.search_text("default", "the garden kiln", [NodeKind.EVENT], 100,
                                      max_rows=50)
    alone = texts_store.search_text("default", "garden kiln", [NodeKind.EVENT], 100)
    assert [i for i, _ in bounded] == [i for i, _ in alone]
    assert len(bounded) == 40  # not the 200 rows "the" would bring
    # words that occur nowhere are dropped without changing anything
    assert texts_store.search_text("default", "garden zebra", [NodeKind.EVENT], 100,
                                   max_rows=50) == \
        texts_store.search_text("default", "garden", [NodeKind.EVENT], 100)


def test_a_word_commoner_than_the_budget_scores_only_its_latest_rows(
        texts_store: SQLiteStore) -> None:
    hits = texts_store.search_text("default", "the", [NodeKind.EVENT], 100, max_rows=30)
    assert len(hits) == 30
    texts = {texts_store.get_node("default", i).text for i, _ in hits}  # type: ignore[union-attr]
    latest = {f"the note {i} about the " for i in range(170, 200)}
    assert {t.split("the note ")[1].split(" ")[0] for t in texts} == \
        {t.split("the note ")[1].split(" ")[0] for t in latest}


def test_recall_passes_the_budget_from_the_settings(tmp_path: Path) -> None:
    seen: list[int | None] = []
    with Memory.open(tmp_path / "m.db", embedder="hash", planner=None,
                     settings=Settings().with_(lexical_rows=123)) as mem:
        mem.add("the garden needs water")
        real = mem.store.search_text

        def spy(*args: object, max_rows: int | None = None) -> list[tuple[str, float]]:
            seen.append(max_rows)
            return real(*args, max_rows=max_rows)  # type: ignore[arg-type]

        mem.store.search_text = spy  # type: ignore[method-assign]
        mem.recall("garden")
    assert seen and set(seen) == {123}


# --------------------------------------------------------------------- grounding
def _concept_graph(n: int) -> tuple[WorkingGraph, np.ndarray]:
    g = WorkingGraph("A")
    rng = np.random.default_rng(0)
    vecs = rng.standard_normal((n, 16)).astype(np.float32)
    g.begin()
    ids = []
    for i in range(n):
        node = _event(i)
        g.put_node(node)
        g.set_vector(node.id, vecs[i])
        ids.append(node.id)
    g.put_node(Node(id="co_big", namespace="A", kind=NodeKind.CONCEPT, text="big",
                    grounded_in=tuple(ids)))
    for i in ids:
        g.put_edge(Edge("A", i, "co_big", EdgeType.REINFORCES, 1.0))
    g.commit()
    return g, vecs


def test_ground_gives_a_large_node_s_sources_nearest_the_query() -> None:
    g, vecs = _concept_graph(600)
    q = vecs[17]
    everything = ground(g, {"co_big": 1.0}, per_node=None)
    assert len(everything) == 600
    some = ground(g, {"co_big": 1.0}, qvec=q, per_node=100, scan=600)
    assert len(some) == 100
    sims = g.event_vectors.similarities(q, list(everything))
    best = sorted(sims, key=lambda e: -sims[e])[:100]
    assert set(some) == set(best)
    # without a query vector: the most recent
    recent = ground(g, {"co_big": 1.0}, per_node=50)
    assert set(recent) == {f"ev_{i:05d}" for i in range(550, 600)}
    # and only among the newest `scan` sources: by default the newest GROUND_SCAN
    default = ground(g, {"co_big": 1.0}, qvec=q, per_node=100)
    assert len(default) == 100
    assert all(int(e[3:]) >= 600 - GROUND_SCAN for e in default)
    window = ground(g, {"co_big": 1.0}, qvec=q, per_node=10, scan=100)
    assert all(int(e[3:]) >= 500 for e in window)


def test_ground_keeps_the_window_before_choosing() -> None:
    g, vecs = _concept_graph(300)
    win = (1_700_000_000.0 + 10, 1_700_000_000.0 + 20)
    got = ground(g, {"co_big": 1.0}, qvec=vecs[0], window=win, per_node=100)
    assert set(got) == {f"ev_{i:05d}" for i in range(10, 20)}


# -------------------------------------------------------------------------- hubs
def _hub_graph(n: int) -> WorkingGraph:
    g = WorkingGraph("A")
    g.begin()
    g.put_node(Node(id="pe_sam", namespace="A", kind=NodeKind.PERSON, text="Sam"))
    for i in range(n):
        g.put_node(_event(i))
        g.put_edge(Edge("A", "pe_sam", f"ev_{i:05d}", EdgeType.PARTICIPATES, 1.0))
    g.commit()
    return g


def test_a_hub_is_expanded_from_its_most_recent_edges() -> None:
    g = _hub_graph(3000)
    near = recent_neighbors(g, "pe_sam", 100)
    assert {o for o, _ in near} == {f"ev_{i:05d}" for i in range(2900, 3000)}
    assert len(list(recent_neighbors(g, "ev_00001", 100))) == 1
    reach = traverse(g, {"pe_sam": 1.0}, hops=1, max_degree=50)
    events = [n for n in reach if n.startswith("ev_")]
    assert len(events) == 50 and all(int(e[3:]) >= 3000 - 4 * 50 for e in events)
    # the scan is Settings.traverse_hub_scan: at 1 × max_degree, only the 50 latest
    reach = traverse(g, {"pe_sam": 1.0}, hops=1, max_degree=50, hub_scan=1)
    assert {n for n in reach if n.startswith("ev_")} == {f"ev_{i:05d}" for i in range(2950, 3000)}


def test_pagerank_of_a_hub_subgraph_is_the_same_by_lookup() -> None:
    g = _hub_graph(2000)  # the hub's degree is far above the subgraph's size
    nodes = ["pe_sam", *(f"ev_{i:05d}" for i in range(0, 2000, 100))]
    fast = personalized_pagerank(g, {"pe_sam": 1.0}, nodes)
    small = _hub_graph(0)
    small.begin()
    for n in nodes[1:]:
        small.put_node(g.nodes[n])
        small.put_edge(Edge("A", "pe_sam", n, EdgeType.PARTICIPATES, 1.0))
    small.commit()
    slow = personalized_pagerank(small, {"pe_sam": 1.0}, nodes)  # walks every edge
    assert fast == pytest.approx(slow)


# ---------------------------------------------------------------- sequence index
def test_the_graph_keeps_events_by_sequence_number() -> None:
    g = _hub_graph(5)
    assert g.events_by_seq == {i + 1: f"ev_{i:05d}" for i in range(5)}
    g.begin()
    g.remove_node("ev_00002")
    g.commit()
    assert 3 not in g.events_by_seq and len(g.events_by_seq) == 4
    g.begin()
    g.put_node(_event(9))
    g.rollback()
    assert 10 not in g.events_by_seq


# ------------------------------------------------------------ embedding threads
def test_one_text_embeds_with_one_thread_and_a_batch_with_every_core() -> None:
    emb = MiniLMEmbedder()
    assert emb.threads_for(1) == 1
    assert emb.threads_for(8) == available_cores()
    custom = make_embedder("minilm", settings=Settings().with_(embed_threads_single=2,
                                                               embed_threads_batch=3))
    assert isinstance(custom, MiniLMEmbedder)
    assert (custom.threads_for(1), custom.threads_for(2)) == (2, 3)
    assert MiniLMEmbedder(threads_single=0).threads_for(1) is None
    assert isinstance(make_embedder("hash", settings=Settings()), HashingEmbedder)


def test_torch_runs_a_single_text_with_the_threads_asked_for() -> None:
    torch = pytest.importorskip("torch")

    class Model:
        def __init__(self) -> None:
            self.seen: list[int] = []

        def encode(self, texts: list[str], **_: object) -> np.ndarray:
            self.seen.append(torch.get_num_threads())
            return np.ones((len(texts), 384), dtype=np.float32)

    before = torch.get_num_threads()
    emb = MiniLMEmbedder(threads_single=1, threads_batch=2)
    model = emb._model = Model()
    emb.embed(["one query"])
    emb.embed(["a", "batch"])
    assert model.seen == [1, 2]
    assert torch.get_num_threads() == before  # put back after the call


def test_ground_follows_only_the_best_scored_nodes_of_many() -> None:
    g = WorkingGraph("A")
    g.begin()
    for i in range(30):
        g.put_node(_event(i))
        g.put_node(Node(id=f"cl_{i:05d}", namespace="A", kind=NodeKind.CLAIM, text="c",
                        grounded_in=(f"ev_{i:05d}",)))
    g.commit()
    claims = {f"cl_{i:05d}": (2.0 if i == 3 else 1.0) for i in range(30)}
    assert len(ground(g, claims, max_nodes=None)) == 30
    got = ground(g, claims, max_nodes=5)
    assert set(got) == {"ev_00003", *(f"ev_{i:05d}" for i in range(26, 30))}


# ------------------------------------------------------------- candidate features
def test_the_feature_matrix_equals_its_reference_on_random_signals() -> None:
    import random

    from enfold.recall.rank import FEATURES, Signals, feature_matrix, feature_matrix_reference

    rng = random.Random(5)

    def pick(ids: list[str], share: float) -> set[str]:
        return {e for e in ids if rng.random() < share}

    for trial in range(60):
        ids = [f"ev_{i:04d}" for i in range(rng.randint(0, 80))]
        sig = Signals(asks_latest=trial % 2 == 0)
        sig.lex = {e: rng.uniform(-1, 9) for e in pick(ids, 0.3)}
        sig.dense = {e: rng.uniform(-0.2, 0.9) for e in pick(ids, 0.7)}
        sig.dense_floor = rng.uniform(-0.1, 0.5)
        sig.passage = {e: rng.uniform(-0.2, 0.95) for e in pick(ids, 0.2)}
        sig.ground = {e: rng.random() for e in pick(ids, 0.2)}
        sig.person = {e: rng.random() for e in pick(ids, 0.1)}
        sig.claim = {e: rng.random() for e in pick(ids, 0.1)}
        sig.speaker, sig.opinion, sig.window = pick(ids, 0.1), pick(ids, 0.2), pick(ids, 0.3)
        sig.answer = pick(ids, 0.25)
        sig.cover = {e: rng.random() for e in pick(ids, 0.4)}
        sig.ts = {e: rng.choice((1e9, 1e9 + rng.random() * 1e6)) for e in pick(ids, 0.9)}
        candidates = [e for e in ids if rng.random() < 0.8]
        outside = [f"ev_x{i}" for i in range(5)]  # neighbours that are not candidates
        sig.lex.update({e: rng.uniform(0, 5) for e in outside[:2]})
        near = {e: (tuple(rng.sample(ids + outside, min(rng.randint(0, 2), len(ids)))),
                    tuple(rng.sample(ids + outside, min(rng.randint(0, 3), len(ids)))))
                for e in candidates if rng.random() < 0.9}
        if trial % 3 == 0:  # tied scores: reciprocal ranks break ties by id
            for scores in (sig.lex, sig.dense, sig.ground):
                for e in scores:
                    scores[e] = round(scores[e], 1)
        got = feature_matrix(candidates, sig, near)
        assert got.shape == (len(candidates), len(FEATURES))
        assert np.array_equal(got, feature_matrix_reference(candidates, sig, near))


def test_the_neighbouring_turns_kept_follow_the_events() -> None:
    from enfold.recall.controller import _Turns

    m = Memory.open("memory:", embedder="hash", planner="local")
    for i in range(6):
        m.add(f"turn {i} of the talk about kilns", ts=1_790_000_000 + 60 * i)
    with m.reading() as g:
        first = [g.events_by_seq[s] for s in sorted(g.events_by_seq)]
        gap = m.settings.neighbour_gap_s
        turns = _Turns.of(g, gap)
        assert turns(first[2]) == ((first[1], first[3]), (first[0], first[4]))
    m.recall("kilns")  # access statistics change no turn: the kept turns stay
    with m.reading() as g:
        assert _Turns.of(g, gap) is turns
        assert _Turns.of(g, 30.0)(first[2]) == ((), ())  # turns a minute apart are not
        turns = _Turns.of(g, gap)  # within a 30 s gap; the caller's gap is kept
    m.add("turn 6, a minute later", ts=1_790_000_000 + 360)
    with m.reading() as g:
        fresh = _Turns.of(g, gap)
        assert fresh is not turns
        last = [g.events_by_seq[s] for s in sorted(g.events_by_seq)]
        assert fresh(last[5]) == ((last[4], last[6]), (last[3],))
        assert _Turns.of(g, gap) is fresh
        assert _Turns.of(g, gap, 0) is not fresh  # past Settings.turns_kept: anew
    m.close()


def _lexical(m: Memory, text: str, kinds: Any, n: int) -> list[tuple[str, float]]:
    return list(m.store.search_text(m.namespace, text, kinds, n))


def test_the_dense_floor_and_the_facts_first_margin_are_settings() -> None:
    from functools import partial

    from enfold.recall.analyze import analyze
    from enfold.recall.controller import gather

    floors = []
    for settings in (Settings(), Settings().with_(dense_floor_rank=1)):
        m = Memory.open("memory:", embedder="hash", planner="local", settings=settings)
        for i in range(20):
            m.add(f"note {i} about the kiln and glaze batch {i}", ts=1_790_000_000 + 60 * i)
        qvec = np.asarray(m.embedder.embed(["kiln glaze"])[0], dtype=np.float32)
        lexical = partial(_lexical, m)
        with m.reading() as g:
            sig, _, _ = gather(g, lexical, analyze("kiln glaze"), qvec, m.settings)
        floors.append((sig.dense_floor, min(sig.dense.values()), max(sig.dense.values())))
        m.close()
    assert floors[0][0] == floors[0][1] < floors[0][2]  # 20 hits: the last one is the floor
    assert floors[1][0] == floors[1][2]  # at rank 1 the best cosine is the floor
    firsts = []
    for settings in (Settings().with_(facts_first_margin=0.0),
                     Settings().with_(facts_first_margin=1.0)):
        m = Memory.open("memory:", embedder="hash", planner="local", settings=settings)
        m.add("I think the new kiln is wonderful", source="Ana", ts=1_790_000_000)
        m.add("The new kiln reached 1200 degrees on Friday", source="Ana", ts=1_790_000_060)
        firsts.append(m.recall("the new kiln wonderful", k=2, touch=False).evidence[0].text)
        m.close()
    # the opinion scores best; the plain account goes first at a margin of 0, not when it
    # must score as well
    assert firsts == ["The new kiln reached 1200 degrees on Friday",
                      "I think the new kiln is wonderful"]


# ------------------------------------------------------------- the asked time's events
def test_the_nearest_of_some_ids_equal_the_filtered_exact_scan() -> None:
    from enfold.vectors import VectorIndex

    rng = np.random.default_rng(3)
    index = VectorIndex()
    x = rng.standard_normal((400, 16)).astype(np.float32)
    x[7] = x[3]  # a tie
    for i, v in enumerate(x):
        index.put(f"ev_{i:03d}", v)
    index.remove("ev_011")
    for trial in range(20):
        q = rng.standard_normal(16).astype(np.float32)
        some = {f"ev_{i:03d}" for i in rng.choice(400, 60, replace=False)} | {"ev_003", "ev_007"}
        got = index.nearest_among(q, sorted(some, reverse=True), 25)
        want = index.search_exact(q, 25, accept=some.__contains__)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert [s for _, s in got] == pytest.approx([s for _, s in want], abs=1e-6)
    assert index.nearest_among(x[0], ["ev_011", "nope"], 5) == []


def test_a_window_question_reads_only_the_asked_time_and_follows_new_events() -> None:
    from enfold.recall.controller import _Times

    g = WorkingGraph("A")
    g.begin()
    for i in range(50):
        g.put_node(_event(i), persist=False)
    day = _Times.of(g).within((1_700_000_010.0, 1_700_000_020.0))
    assert day == [f"ev_{i:05d}" for i in range(10, 20)]
    g.put_node(Node(id="ev_late", namespace="A", kind=NodeKind.EVENT, text="late",
                    attrs={"ts": 1_700_000_015.5, "seq": 99}), persist=False)
    assert "ev_late" in _Times.of(g).within((1_700_000_010.0, 1_700_000_020.0))
    assert _Times.of(g).within((1_600_000_000.0, 1_600_000_001.0)) == []


# ------------------------------------------------------------------------ a holder's views
_TOPICS = ["the kayak trip", "the roof repair", "the budget", "the new hire", "the garden",
           "the offsite", "the lease", "the website", "the van", "the audit", "the menu",
           "the move"]


def test_a_holder_of_many_views_is_followed_through_the_ones_closest_to_the_question(
        ) -> None:
    """A question about what someone thinks follows the views of theirs the anchors found
    and, of the rest, only ``holder_claims_max``: those whose events are closest to the
    question. The count grounded stays bounded however many views the holder has, and a
    view asked about in other words than its own (no anchor finds it) is still the answer,
    though it is the oldest of them."""
    def views(most: int, question: str) -> tuple[int, int, Any]:
        mem = Memory.open("memory:", settings=Settings(holder_claims_max=most))
        for i, topic in enumerate(_TOPICS):
            mem.add(f"Tariq thinks {topic} is a mistake.", source="Tariq",
                    ts=1_700_000_000.0 + 3_600 * i)
        held = sum(1 for c in mem.graph().of_kind(NodeKind.CLAIM)
                   if mem.graph().nodes[c].attrs.get("holder") == "Tariq")
        pack = mem.recall(question, k=5)
        grounded = next(s["claims"] for s in pack.steps if s.get("claims_of") == "Tariq")
        return held, int(grounded), pack

    roof = "What does Tariq think about the roof repair?"
    held, everything, _ = views(1_000, roof)
    assert held == len(_TOPICS) and everything == held
    held, grounded, pack = views(3, roof)
    assert grounded < held
    assert "roof repair" in pack.claims[0].text and "roof repair" in pack.evidence[0].text
    canoe = "What does Tariq think about the canoe outing?"
    for most in (1_000, 3):
        _, grounded, pack = views(most, canoe)
        assert "kayak trip" in pack.evidence[0].text, (most, pack.evidence[0].text)


def test_a_holder_of_many_views_is_looked_at_through_the_most_recent_and_the_anchored(
        ) -> None:
    """Of a holder's views no anchor found, only the ``holder_claims_scan`` most recent are
    looked at for the closest (so the cost follows the setting, not how many views the
    holder has); a view the anchors found counts at any age. Asked in its own words, the
    oldest view is still the answer with the scan bounded; asked in other words (no anchor
    finds it), a scan that does not reach back to it leaves it out of the claims, which is
    the price of the bound."""
    def views(scan: int, question: str) -> tuple[int, Any]:
        mem = Memory.open("memory:", settings=Settings(holder_claims_scan=scan))
        for i, topic in enumerate(_TOPICS):
            mem.add(f"Tariq thinks {topic} is a mistake.", source="Tariq",
                    ts=1_700_000_000.0 + 3_600 * i)
        pack = mem.recall(question, k=5)
        grounded = next(s["claims"] for s in pack.steps if s.get("claims_of") == "Tariq")
        return int(grounded), pack

    oldest = "What does Tariq think about the kayak trip?"
    everything, pack = views(1_000, oldest)
    assert everything == len(_TOPICS) and "kayak trip" in pack.evidence[0].text
    bounded, pack = views(3, oldest)
    assert bounded <= 3 + 1  # the three most recent, and the one the anchors found
    assert "kayak trip" in pack.claims[0].text and "kayak trip" in pack.evidence[0].text
    canoe = "What does Tariq think about the canoe outing?"
    _, pack = views(1_000, canoe)
    assert "kayak trip" in pack.evidence[0].text
    bounded, pack = views(3, canoe)
    assert bounded <= 3 + 1
    assert all("kayak trip" not in c.text for c in pack.claims)


def test_a_holders_claims_equal_the_reference_while_the_scan_holds_them_all() -> None:
    """While a holder's links fit ``scan`` (or with none), :func:`_claims` keeps what the
    reference keeps: the anchored claims the holder holds (found by any edge type from
    the holder) and the closest of the rest, with the same scores; anchored claims of
    another holder and the holder's links to non-claims are left out."""
    from enfold.recall import controller
    from enfold.recall.analyze import QueryAnalysis

    mem = Memory.open("memory:")
    for i, topic in enumerate(_TOPICS):
        for who in ("Tariq", "Mina"):
            mem.add(f"{who} thinks {topic} is a mistake.", source=who,
                    ts=1_700_000_000.0 + 3_600 * i + (60 if who == "Mina" else 0))
    g = mem.graph()
    claims = sorted(g.of_kind(NodeKind.CLAIM))
    assert len(claims) >= 2 * len(_TOPICS)
    tariq = controller._person(g, "Tariq")
    assert tariq is not None and g.derived.get(tariq)
    question = "What does Tariq think about the roof repair?"
    qvec = mem.embedder.embed([question])[0]

    def reference(derived: dict[str, float], most: int) -> dict[str, float]:
        ids = g.by_kind[NodeKind.CLAIM]
        scores = {c: s for c, s in derived.items() if c in ids}
        held = {o for o, e in g.links(tariq) if e.src == tariq}
        base = min(scores.values(), default=0.01) * 0.5
        rest = [c for c in held if c in ids and c not in scores]
        if len(rest) > most:
            kept = set(controller._closest_claims(g, rest, qvec, most))
            held = {c for c in held if c in scores or c in kept}
        return {c: scores.get(c, base) for c in held if c in ids}

    rng = np.random.default_rng(3)
    analysis = QueryAnalysis(query=question, holder="Tariq", asks_opinion=True)
    links = sum(map(len, g.derived[tariq].values()))
    for _ in range(10):
        anchored = rng.choice(claims, size=int(rng.integers(0, 8)), replace=False)
        derived = {str(c): float(rng.uniform(0.1, 1.0)) for c in anchored}
        for most in (2, 5, 1_000):
            want = reference(derived, most)
            for scan in (None, links, links + 5):
                assert controller._claims(g, analysis, derived, qvec, most, scan) == want


def test_a_holder_who_said_each_view_many_times_brings_only_the_closest_utterances(
        ) -> None:
    """The utterances behind a holder's views are candidates up to ``holder_events_max``,
    the closest to the question: a holder who said each view many times costs what one who
    said it once does, and the view asked about is still the answer."""
    def ask(most: int) -> tuple[int, Any]:
        mem = Memory.open("memory:", settings=Settings(holder_events_max=most))
        for i in range(4 * len(_TOPICS)):
            topic = _TOPICS[i % len(_TOPICS)]
            mem.add(f"Tariq thinks {topic} is a mistake, again (day {i}).", source="Tariq",
                    ts=1_700_000_000.0 + 3_600 * i)
        pack = mem.recall("What does Tariq think about the roof repair?", k=5)
        step = next(s for s in pack.steps if s.get("claims_of") == "Tariq")
        return int(step["utterances"]), pack

    every, pack = ask(1_000)
    assert every > 3 and "roof repair" in pack.evidence[0].text
    bounded, pack = ask(3)
    assert bounded == 3
    assert "roof repair" in pack.evidence[0].text


def test_the_closest_utterances_equal_a_plain_sort() -> None:
    """:func:`_closest_utterances` keeps what sorting every utterance by (its claim's score,
    cosine, id) keeps, with their own scores: ties at the cut, events the index lacks, a
    zero query vector and none."""
    from types import SimpleNamespace

    from enfold.recall.controller import _closest_utterances
    from enfold.vectors import VectorIndex

    rng = np.random.default_rng(11)
    index = VectorIndex(8)
    base = rng.normal(size=(6, 8))
    for i in range(50):  # six distinct vectors: many ties
        index.put(f"ev_{i:03d}", base[i % 6].astype(np.float32))
    graph: Any = SimpleNamespace(event_vectors=index)
    for _ in range(20):
        ids = [f"ev_{i:03d}" for i in rng.choice(60, size=int(rng.integers(1, 40)),
                                                 replace=False)]
        said = {e: float(rng.choice([0.5, 1.0])) for e in ids}  # two claims' scores
        q = rng.normal(size=8).astype(np.float32)
        for qvec in (q, np.zeros(8, dtype=np.float32), None):
            close = dict(zip(ids, index.similarity_array(qvec, ids).tolist()
                             if qvec is not None else [0.0] * len(ids), strict=True))
            for most in (1, 4, len(ids), len(ids) + 2):
                want = sorted(ids, key=lambda e: (said[e], close[e], e), reverse=True)[:most]
                got = _closest_utterances(graph, said, qvec, most)
                assert sorted(got) == sorted(want)
                assert all(got[e] == said[e] for e in got)


def test_the_closest_claims_equal_a_plain_sort_of_every_claim() -> None:
    """The array form of :func:`_closest_claims` (one operation per step, not per claim)
    picks what sorting every claim by (closeness, id) picks: ties at the cut, claims
    resting on no indexed event or on several, and no query vector."""
    from types import SimpleNamespace

    from enfold.recall.controller import _closest_claims
    from enfold.vectors import VectorIndex

    rng = np.random.default_rng(7)
    index = VectorIndex(8)
    events = [f"ev_{i:03d}" for i in range(40)]
    base = rng.normal(size=(10, 8))
    for i, e in enumerate(events):  # only ten distinct vectors: many ties
        index.put(e, base[i % 10].astype(np.float32))
    for trial in range(30):
        claims = [f"cl_{trial:02d}_{j:03d}" for j in range(int(rng.integers(1, 60)))]
        nodes = {c: SimpleNamespace(grounded_in=tuple(
            rng.choice([*events, "ev_gone"], size=int(rng.integers(0, 4)), replace=False)))
            for c in claims}
        graph: Any = SimpleNamespace(nodes=nodes, event_vectors=index)
        q = rng.normal(size=8).astype(np.float32)
        for qvec in (q, None):
            # the reference: every claim's closeness, claim by claim, then a full sort
            flat = [e for c in claims for e in nodes[c].grounded_in]
            sims = list(index.similarity_array(q, flat)) if qvec is not None else []
            close, at = {}, 0
            for c in claims:
                n = len(nodes[c].grounded_in)
                close[c] = max(sims[at:at + n], default=-2.0) if sims else -2.0
                at += n
            for most in (1, 5, max(1, len(claims) - 1), len(claims), len(claims) + 3):
                want = sorted(claims, key=lambda c: (close[c], c), reverse=True)[:most]
                assert _closest_claims(graph, claims, qvec, most) == want
